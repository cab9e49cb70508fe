/**
 * Indexing ops: StridedSlice (all five masks), Slice, Split/SplitV, Gather/GatherV2, GatherNd,
 * Pad/PadV2/MirrorPad. Slice bounds must be constants; gathered indices may be computed.
 */
import { NHWC_TO_NCHW, type OpContext, type Translator, permute } from "../context";
import { FOLD_LIMIT, count, isStatic } from "../fold";
import { INT64_MAX, INT64_MIN, type Value, numbers } from "../onnx-graph";
import { axisOf, takeConst } from "./shape";

interface AxisSlice {
  axis: number;
  start: number;
  end: number;
  step: number;
}

/** Elements picked along one dim (python slice semantics, as TF applies them). */
function sliceIndices(dim: number, s: AxisSlice): number[] {
  const norm = (v: number, lo: number, hi: number) => Math.min(Math.max(v < 0 ? v + dim : v, lo), hi);
  const out: number[] = [];
  if (s.step > 0) {
    const a = norm(s.start, 0, dim);
    const b = norm(s.end, 0, dim);
    for (let k = a; k < b; k += s.step) out.push(k);
  } else {
    const a = s.start >= INT64_MAX ? dim - 1 : norm(s.start, -1, dim - 1);
    const b = s.end <= INT64_MIN ? -1 : norm(s.end, -1, dim - 1);
    for (let k = a; k > b; k += s.step) out.push(k);
  }
  return out;
}

/** Applies per-axis slices to a constant in JS. */
function sliceConst(ctx: OpContext, x: Value, slices: AxisSlice[]): Value | null {
  if (!x.data || !isStatic(x.shape)) return null;
  const picks = x.shape.map((d, axis) => {
    const s = slices.find((q) => q.axis === axis);
    return s ? sliceIndices(d, s) : [...Array(d).keys()];
  });
  const shape = picks.map((p) => p.length);
  if (count(shape) > FOLD_LIMIT) return null;
  const src = numbers(x.data);
  const strides = x.shape.map((_, k) => count(x.shape.slice(k + 1)));
  const out: number[] = [];
  const walk = (axis: number, offset: number) => {
    if (axis === shape.length) return void out.push(src[offset]);
    for (const i of picks[axis]) walk(axis + 1, offset + i * strides[axis]);
  };
  walk(0, 0);
  return ctx.g.constant(x.dtype, shape, out);
}

function applySlices(ctx: OpContext, x: Value, slices: AxisSlice[]): Value {
  const real = slices.filter((s) => !(s.step === 1 && s.start === 0 && s.end >= INT64_MAX));
  if (!real.length) return x;
  const folded = sliceConst(ctx, x, real);
  if (folded) return folded;
  const shape = x.shape.map((d, axis) => {
    const s = real.find((q) => q.axis === axis);
    return !s ? d : d < 0 ? -1 : sliceIndices(d, s).length;
  });
  const ins = [x, ctx.g.int64(real.map((s) => s.start)), ctx.g.int64(real.map((s) => s.end)), ctx.g.int64(real.map((s) => s.axis)), ctx.g.int64(real.map((s) => s.step))];
  return ctx.op1("Slice", ins, {}, { dtype: x.dtype, shape }, "/slice");
}

const stridedSlice: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const begin = ctx.constInts(ctx.input(inputs, 1), "begin");
  const end = ctx.constInts(ctx.input(inputs, 2), "end");
  const strides = ctx.constInts(ctx.input(inputs, 3), "strides");
  const bit = (name: string) => {
    const m = ctx.attrs.int(name, 0);
    return (k: number) => ((m >> k) & 1) === 1;
  };
  const [bMask, eMask, ellipsis, newAxis, shrink] = ["begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"].map(bit);
  const rank = x.shape.length;
  const specs = begin.length;
  let consumed = 0;
  for (let k = 0; k < specs; k++) if (!newAxis(k) && !ellipsis(k)) consumed++;
  const slices: AxisSlice[] = [];
  const squeezeAxes: number[] = [];
  const outDims: Array<"new" | number> = []; // input axis kept, or a new axis
  let d = 0;
  let sawEllipsis = false;
  for (let k = 0; k < specs; k++) {
    if (ellipsis(k)) {
      sawEllipsis = true;
      const n = rank - consumed;
      for (let j = 0; j < n; j++) outDims.push(d++);
    } else if (newAxis(k)) {
      outDims.push("new");
    } else {
      const step = strides[k];
      if (step === 0) ctx.fail("stride 0", "INVALID_ARGUMENT");
      if (shrink(k)) {
        const b = begin[k];
        slices.push({ axis: d, start: b, end: b === -1 ? INT64_MAX : b + 1, step: 1 });
        squeezeAxes.push(d);
      } else {
        const start = bMask(k) ? (step > 0 ? 0 : INT64_MAX) : begin[k];
        const stop = eMask(k) ? (step > 0 ? INT64_MAX : INT64_MIN) : end[k];
        slices.push({ axis: d, start, end: stop, step });
        outDims.push(d);
      }
      d++;
    }
  }
  if (!sawEllipsis) while (d < rank) outDims.push(d++);
  let y = applySlices(ctx, x, slices);
  if (squeezeAxes.length) {
    const shape = y.shape.filter((_, k) => !squeezeAxes.includes(k));
    y = y.data ? ctx.g.constant(y.dtype, shape, y.data) : ctx.op1("Squeeze", [y, ctx.g.int64(squeezeAxes)], {}, { dtype: y.dtype, shape }, "/squeeze");
  }
  const newAxes = outDims.flatMap((o, k) => (o === "new" ? [k] : []));
  if (newAxes.length) {
    const shape = [...y.shape];
    for (const a of newAxes) shape.splice(a, 0, 1);
    y = y.data ? ctx.g.constant(y.dtype, shape, y.data) : ctx.op1("Unsqueeze", [y, ctx.g.int64(newAxes)], {}, { dtype: y.dtype, shape }, "/newaxis");
  }
  return [y];
};

const slice: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const begin = ctx.constInts(ctx.input(inputs, 1), "begin");
  const size = ctx.constInts(ctx.input(inputs, 2), "size");
  return [applySlices(ctx, x, begin.map((b, axis) => ({ axis, start: b, end: size[axis] === -1 ? INT64_MAX : b + size[axis], step: 1 })))];
};

function splitInto(ctx: OpContext, x: Value, axis: number, sizes: number[]): Value[] {
  const outs = sizes.map((n) => {
    const shape = [...x.shape];
    shape[axis] = n;
    return { dtype: x.dtype, shape };
  });
  return ctx.g.op("Split", [x, ctx.g.int64(sizes)], { axis: { i: axis } }, outs, ctx.hint);
}

const split: Translator = (ctx, inputs) => {
  const [a] = ctx.constInts(ctx.input(inputs, 0), "split_dim");
  const x = ctx.input(inputs, 1);
  const axis = axisOf(a, x.shape.length);
  const n = ctx.attrs.int("num_split");
  const dim = x.shape[axis];
  if (dim < 0) {
    const shape = [...x.shape];
    shape[axis] = -1;
    return ctx.g.op("Split", [x], { axis: { i: axis } }, Array.from({ length: n }, () => ({ dtype: x.dtype, shape })), ctx.hint);
  }
  return splitInto(ctx, x, axis, Array(n).fill(dim / n));
};

const splitV: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const sizes = ctx.constInts(ctx.input(inputs, 1), "size_splits");
  const [a] = ctx.constInts(ctx.input(inputs, 2), "split_dim");
  const axis = axisOf(a, x.shape.length);
  const known = sizes.filter((s) => s >= 0).reduce((p, q) => p + q, 0);
  if (sizes.includes(-1)) {
    if (x.shape[axis] < 0) ctx.fail("a -1 split size needs a known dim");
    sizes[sizes.indexOf(-1)] = x.shape[axis] - known;
  }
  return splitInto(ctx, x, axis, sizes);
};

const gather: Translator = (ctx, inputs) => {
  const params = ctx.input(inputs, 0);
  const indices = ctx.input(inputs, 1);
  const [a] = ctx.node.op === "Gather" ? [0] : ctx.constInts(ctx.input(inputs, 2), "axis");
  if (ctx.attrs.int("batch_dims", 0) !== 0) ctx.fail("batch_dims other than 0 is not supported");
  const axis = axisOf(a, params.shape.length);
  const shape = [...params.shape.slice(0, axis), ...indices.shape, ...params.shape.slice(axis + 1)];
  if (params.data && indices.data && isStatic(params.shape) && count(shape) <= FOLD_LIMIT) {
    const picks = numbers(indices.data).map((i) => takeConst(ctx, params, axis, i));
    // Re-interleave: for each outer position, the picked rows in index order.
    const outer = count(params.shape.slice(0, axis));
    const inner = count(params.shape.slice(axis + 1));
    const out: number[] = [];
    for (let o = 0; o < outer; o++) for (const p of picks) out.push(...numbers(p.data!).slice(o * inner, (o + 1) * inner));
    return [ctx.g.constant(params.dtype, shape, out)];
  }
  return [ctx.op1("Gather", [params, indices], { axis: { i: axis } }, { dtype: params.dtype, shape })];
};

const gatherNd: Translator = (ctx, inputs) => {
  const params = ctx.input(inputs, 0);
  const indices = ctx.input(inputs, 1);
  const depth = indices.shape.at(-1)!;
  if (!(depth >= 0)) ctx.fail("the last dim of indices must be known");
  const shape = [...indices.shape.slice(0, -1), ...params.shape.slice(depth)];
  return [ctx.op1("GatherND", [params, ctx.int64(indices)], {}, { dtype: params.dtype, shape })];
};

const pad: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const p = ctx.input(inputs, 1);
  const r = x.shape.length;
  const mirror = ctx.node.op === "MirrorPad";
  const attrs: Record<string, { s: string }> = {};
  if (mirror) {
    const mode = ctx.attrs.str("mode");
    if (mode !== "REFLECT") ctx.fail(`MirrorPad mode ${mode} is not supported (only REFLECT)`);
    attrs.mode = { s: "reflect" };
  }
  let pads: Value;
  let shape: number[];
  const value = ctx.node.op === "PadV2" ? ctx.cast(ctx.input(inputs, 2), x.dtype) : null;
  if (p.data && x.nchw) {
    // Stay in NCHW: NCHW axis j is NHWC axis NHWC_TO_NCHW[j].
    const v = numbers(p.data);
    const pads = ctx.g.int64([...NHWC_TO_NCHW.map((a) => v[2 * a]), ...NHWC_TO_NCHW.map((a) => v[2 * a + 1])]);
    const shape = x.shape.map((d, k) => (d < 0 ? -1 : d + v[2 * k] + v[2 * k + 1]));
    const y = ctx.op1("Pad", value ? [x.nchw, pads, value] : [x.nchw, pads], attrs, { dtype: x.dtype, shape: permute(shape, NHWC_TO_NCHW) });
    return [ctx.lazyNhwc(y)];
  }
  if (p.data) {
    const v = numbers(p.data);
    pads = ctx.g.int64([...Array.from({ length: r }, (_, k) => v[2 * k]), ...Array.from({ length: r }, (_, k) => v[2 * k + 1])]);
    shape = x.shape.map((d, k) => (d < 0 ? -1 : d + v[2 * k] + v[2 * k + 1]));
  } else {
    // [r, 2] -> [2, r] -> [2r] (all befores, then all afters), as int64.
    const t = ctx.transpose(ctx.int64(p), [1, 0], "/pads_t");
    pads = ctx.op1("Reshape", [t, ctx.g.int64([-1])], {}, { dtype: "int64", shape: [2 * r] }, "/pads");
    shape = Array(r).fill(-1);
  }
  return [ctx.op1("Pad", value ? [x, pads, value] : [x, pads], attrs, { dtype: x.dtype, shape })];
};

export const sliceOps: Record<string, Translator> = {
  StridedSlice: stridedSlice,
  Slice: slice,
  Split: split,
  SplitV: splitV,
  Gather: gather,
  GatherV2: gather,
  GatherNd: gatherNd,
  Pad: pad,
  PadV2: pad,
  MirrorPad: pad,
};
