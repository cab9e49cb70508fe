/**
 * Shape manipulation: Reshape, Squeeze, ExpandDims, Concat, Pack/Unpack, Transpose, Tile, Fill,
 * Range, Shape/Size, BroadcastTo, ZerosLike/OnesLike. Constants are folded in JS when small, so
 * shape arithmetic on static tensors disappears from the ONNX graph.
 */
import { NCHW_AXIS, NHWC_TO_NCHW, type OpContext, type Translator, permute } from "../context";
import { FOLD_LIMIT, broadcastShape, count, foldConcat, isStatic, reshaped } from "../fold";
import { type Value, numbers } from "../onnx-graph";

const axisOf = (axis: number, rank: number) => (axis < 0 ? axis + rank : axis);

/** Resolves a TF reshape target (one -1 allowed) against the input shape when it can. */
function reshapeTarget(input: number[], target: number[]): number[] {
  const known = target.filter((d) => d !== -1);
  if (!target.includes(-1) || !isStatic(input)) return target;
  const rest = count(input) / count(known);
  return target.map((d) => (d === -1 ? rest : d));
}

const reshape: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const s = ctx.input(inputs, 1);
  if (s.data) {
    const shape = reshapeTarget(x.shape, numbers(s.data));
    const folded = isStatic(shape) ? reshaped(ctx.g, x, shape) : null;
    if (folded) return [folded];
    return [ctx.op1("Reshape", [x, ctx.g.int64(numbers(s.data))], {}, { dtype: x.dtype, shape })];
  }
  const rank = s.shape[0];
  if (!(rank >= 0)) return ctx.fail("the target shape must have a known length");
  return [ctx.op1("Reshape", [x, ctx.int64(s)], {}, { dtype: x.dtype, shape: Array(rank).fill(-1) })];
};

const squeeze: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const r = x.shape.length;
  let dims = ctx.attrs.ints("squeeze_dims", ctx.attrs.ints("axis", [])).map((a) => axisOf(a, r));
  if (!dims.length) {
    if (x.shape.includes(-1)) ctx.fail("squeezing all size-1 dims needs a static input shape");
    dims = x.shape.flatMap((d, k) => (d === 1 ? [k] : []));
  }
  const shape = x.shape.filter((_, k) => !dims.includes(k));
  return [reshaped(ctx.g, x, shape) ?? ctx.op1("Squeeze", [x, ctx.g.int64(dims)], {}, { dtype: x.dtype, shape })];
};

function unsqueeze(ctx: OpContext, x: Value, axis: number, suffix = ""): Value {
  const shape = [...x.shape];
  shape.splice(axis, 0, 1);
  return reshaped(ctx.g, x, shape) ?? ctx.op1("Unsqueeze", [x, ctx.g.int64([axis])], {}, { dtype: x.dtype, shape }, suffix);
}

const expandDims: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const [a] = ctx.constInts(ctx.input(inputs, 1), "axis");
  return [unsqueeze(ctx, x, axisOf(a, x.shape.length + 1))];
};

function concat(ctx: OpContext, parts: Value[], axis: number): Value {
  if (parts.length === 1) return parts[0];
  const folded = foldConcat(ctx.g, parts, axis);
  if (folded) return folded;
  const shape = [...parts[0].shape];
  shape[axis] = parts.some((p) => p.shape[axis] < 0) ? -1 : parts.reduce((s, p) => s + p.shape[axis], 0);
  for (let k = 0; k < shape.length; k++) if (k !== axis && shape[k] < 0) shape[k] = Math.max(...parts.map((p) => p.shape[k]));
  if (shape.length === 4 && parts.some((p) => p.nchw)) {
    const ns = parts.map((p) => ctx.toNchw(p));
    return ctx.lazyNhwc(ctx.op1("Concat", ns, { axis: { i: NCHW_AXIS[axis] } }, { dtype: parts[0].dtype, shape: permute(shape, NHWC_TO_NCHW) }));
  }
  return ctx.op1("Concat", parts, { axis: { i: axis } }, { dtype: parts[0].dtype, shape });
}

const concatV2: Translator = (ctx, inputs) => {
  const parts = inputs.slice(0, -1);
  const [a] = ctx.constInts(inputs.at(-1)!, "axis");
  return [concat(ctx, parts, axisOf(a, parts[0].shape.length))];
};

const concatV1: Translator = (ctx, inputs) => {
  const [a] = ctx.constInts(inputs[0], "axis");
  const parts = inputs.slice(1);
  return [concat(ctx, parts, axisOf(a, parts[0].shape.length))];
};

const pack: Translator = (ctx, inputs) => {
  const axis = axisOf(ctx.attrs.int("axis", 0), inputs[0].shape.length + 1);
  return [concat(ctx, inputs.map((v, k) => unsqueeze(ctx, v, axis, `/unsqueeze${k}`)), axis)];
};

/** Element k along `axis` of a constant (used to fold Unpack and Gather). */
function takeConst(ctx: OpContext, x: Value, axis: number, index: number): Value {
  const outer = count(x.shape.slice(0, axis));
  const dim = x.shape[axis];
  const inner = count(x.shape.slice(axis + 1));
  const src = numbers(x.data!);
  const out: number[] = [];
  for (let o = 0; o < outer; o++) out.push(...src.slice((o * dim + index) * inner, (o * dim + index + 1) * inner));
  return ctx.g.constant(x.dtype, x.shape.filter((_, k) => k !== axis), out);
}

const unpack: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const axis = axisOf(ctx.attrs.int("axis", 0), x.shape.length);
  const num = ctx.attrs.int("num", x.shape[axis]);
  if (!(num > 0)) ctx.fail("the number of outputs must be known");
  if (x.data && isStatic(x.shape)) return Array.from({ length: num }, (_, k) => takeConst(ctx, x, axis, k));
  const partShape = [...x.shape];
  partShape[axis] = 1;
  const parts = ctx.g.op("Split", [x], { axis: { i: axis } }, Array.from({ length: num }, () => ({ dtype: x.dtype, shape: partShape })), ctx.hint + "/split");
  const shape = x.shape.filter((_, k) => k !== axis);
  return parts.map((p, k) => ctx.op1("Squeeze", [p, ctx.g.int64([axis])], {}, { dtype: x.dtype, shape }, `:${k}`));
};

const transpose: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const perm = ctx.constInts(ctx.input(inputs, 1), "perm");
  return [ctx.transpose(x, perm, "")];
};

const tile: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const m = ctx.input(inputs, 1);
  const mult = m.data ? numbers(m.data) : null;
  const shape = x.shape.map((d, k) => (mult && d >= 0 ? d * mult[k] : -1));
  return [ctx.op1("Tile", [x, ctx.int64(m)], {}, { dtype: x.dtype, shape })];
};

const fill: Translator = (ctx, inputs) => {
  const dims = ctx.input(inputs, 0);
  const v = ctx.input(inputs, 1);
  if (dims.data) {
    const shape = numbers(dims.data);
    if (v.data && count(shape) <= FOLD_LIMIT) return [ctx.g.constant(v.dtype, shape, Array(count(shape)).fill(numbers(v.data)[0]))];
    return [ctx.op1("Expand", [v, ctx.g.int64(shape)], {}, { dtype: v.dtype, shape })];
  }
  return [ctx.op1("Expand", [v, ctx.int64(dims)], {}, { dtype: v.dtype, shape: Array(dims.shape[0]).fill(-1) })];
};

function likeOf(value: number): Translator {
  return (ctx, inputs) => {
    const x = ctx.input(inputs, 0);
    if (isStatic(x.shape) && count(x.shape) <= FOLD_LIMIT) return [ctx.g.constant(x.dtype, x.shape, Array(count(x.shape)).fill(value))];
    const shape = ctx.op1("Shape", [x], {}, { dtype: "int64", shape: [x.shape.length] }, "/shape");
    return [ctx.op1("Expand", [ctx.g.scalar(x.dtype, value), shape], {}, { dtype: x.dtype, shape: x.shape })];
  };
}

const range: Translator = (ctx, inputs) => {
  const [start, limit, delta] = [ctx.input(inputs, 0), ctx.input(inputs, 1), ctx.input(inputs, 2)];
  const dtype = start.dtype;
  if (start.data && limit.data && delta.data) {
    const [s, l, d] = [numbers(start.data)[0], numbers(limit.data)[0], numbers(delta.data)[0]];
    const n = Math.max(0, Math.ceil((l - s) / d));
    if (n <= FOLD_LIMIT) return [ctx.g.constant(dtype, [n], Array.from({ length: n }, (_, k) => s + k * d))];
  }
  const scalar = (v: Value) => (v.shape.length ? ctx.op1("Reshape", [v, ctx.g.int64([])], {}, { dtype, shape: [] }, "/scalar") : v);
  return [ctx.op1("Range", [scalar(ctx.cast(start, dtype)), scalar(ctx.cast(limit, dtype)), scalar(ctx.cast(delta, dtype))], {}, { dtype, shape: [-1] })];
};

const shapeOp: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  if (isStatic(x.shape)) return [ctx.g.constant("int32", [x.shape.length], x.shape)];
  const s = ctx.op1("Shape", [x], {}, { dtype: "int64", shape: [x.shape.length] }, "/int64");
  return [ctx.cast(s, "int32")];
};

const sizeOp: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  if (isStatic(x.shape)) return [ctx.g.scalar("int32", count(x.shape))];
  return [ctx.cast(ctx.op1("Size", [x], {}, { dtype: "int64", shape: [] }, "/int64"), "int32")];
};

const broadcastTo: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const s = ctx.input(inputs, 1);
  const shape = s.data ? broadcastShape(x.shape, numbers(s.data)) : Array(Math.max(x.shape.length, s.shape[0])).fill(-1);
  return [ctx.op1("Expand", [x, ctx.int64(s)], {}, { dtype: x.dtype, shape })];
};

export const shapeOps: Record<string, Translator> = {
  Reshape: reshape,
  Squeeze: squeeze,
  ExpandDims: expandDims,
  ConcatV2: concatV2,
  Concat: concatV1,
  Pack: pack,
  Unpack: unpack,
  Transpose: transpose,
  Tile: tile,
  Fill: fill,
  ZerosLike: likeOf(0),
  OnesLike: likeOf(1),
  Range: range,
  Shape: shapeOp,
  Size: sizeOp,
  Rank: (ctx, inputs) => [ctx.g.scalar("int32", ctx.input(inputs, 0).shape.length)],
  BroadcastTo: broadcastTo,
};

export { axisOf, takeConst };
