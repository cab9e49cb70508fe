/**
 * Spatial ops: convolutions (plain, fused with BiasAdd + activation, depthwise), pooling, resize
 * and batch norm. TF tensors are NHWC; ONNX Conv/Pool/Resize are NCHW: each reads its input's
 * NCHW twin (or a Transpose of it) and returns a lazy NHWC value carrying the NCHW result, so
 * chains of conv blocks stay in NCHW (see context.ts). Filters are re-laid out at conversion time:
 * conv HWIO -> OIHW, depthwise HWCM -> (C*M)1HW with group C. Bias-less convs get no empty bias
 * input (onnxruntime's NCHWc rewrite skips nodes with one).
 */
import type { OpContext, Translator } from "../context";
import { type Attr, type Value, numbers } from "../onnx-graph";
import { fusedActivation } from "./activation";

type Padding = { kind: "SAME" | "VALID" } | { kind: "EXPLICIT"; pads: [number, number, number, number] };

function padding(ctx: OpContext): Padding {
  const p = ctx.attrs.str("padding");
  if (p === "SAME" || p === "VALID") return { kind: p };
  if (p === "EXPLICIT") {
    const e = ctx.attrs.ints("explicit_paddings");
    // [n_before, n_after, h_before, h_after, w_before, w_after, c_before, c_after]
    return { kind: "EXPLICIT", pads: [e[2], e[4], e[3], e[5]] };
  }
  return ctx.fail(`padding "${p}" is not supported`);
}

function nhwcOnly(ctx: OpContext): void {
  const f = ctx.attrs.str("data_format", "NHWC");
  if (f !== "NHWC") ctx.fail(`data_format ${f} is not supported (only NHWC)`);
}

/** Output size of one spatial dim and the ONNX pads [before, after] that give it. */
function spatial(inp: number, k: number, s: number, d: number, pad: Padding, axis: 0 | 1): { out: number; before: number; after: number } | null {
  const ek = (k - 1) * d + 1;
  if (pad.kind === "EXPLICIT") {
    const before = pad.pads[axis];
    const after = pad.pads[axis + 2];
    return { out: inp < 0 ? -1 : Math.floor((inp + before + after - ek) / s) + 1, before, after };
  }
  if (inp < 0) return null;
  if (pad.kind === "VALID") return { out: Math.floor((inp - ek) / s) + 1, before: 0, after: 0 };
  const out = Math.ceil(inp / s);
  const total = Math.max((out - 1) * s + ek - inp, 0);
  return { out, before: Math.floor(total / 2), after: total - Math.floor(total / 2) };
}

/** Spatial attributes (kernel, strides, dilations, pads/auto_pad) and the NHWC output H, W. */
function windowAttrs(x: Value, k: [number, number], s: [number, number], d: [number, number], pad: Padding): { attrs: Record<string, Attr>; h: number; w: number } {
  const hh = spatial(x.shape[1], k[0], s[0], d[0], pad, 0);
  const ww = spatial(x.shape[2], k[1], s[1], d[1], pad, 1);
  const attrs: Record<string, Attr> = { kernel_shape: { ints: k }, strides: { ints: s } };
  if (hh && ww) attrs.pads = { ints: [hh.before, ww.before, hh.after, ww.after] };
  else attrs.auto_pad = { s: pad.kind === "SAME" ? "SAME_UPPER" : "VALID" };
  return { attrs, h: hh?.out ?? -1, w: ww?.out ?? -1 };
}

/** TF conv filter [kh, kw, cin, cout] -> ONNX [cout, cin, kh, kw]. */
function convWeights(f: Float32Array, [kh, kw, ci, co]: number[]): Float32Array {
  const out = new Float32Array(f.length);
  for (let i = 0; i < kh; i++)
    for (let j = 0; j < kw; j++)
      for (let c = 0; c < ci; c++)
        for (let o = 0; o < co; o++) out[((o * ci + c) * kh + i) * kw + j] = f[((i * kw + j) * ci + c) * co + o];
  return out;
}

/** TF depthwise filter [kh, kw, c, m] -> ONNX grouped conv weights [c*m, 1, kh, kw]. */
function depthwiseWeights(f: Float32Array, [kh, kw, c, m]: number[]): Float32Array {
  const out = new Float32Array(f.length);
  for (let i = 0; i < kh; i++)
    for (let j = 0; j < kw; j++)
      for (let ch = 0; ch < c; ch++)
        for (let q = 0; q < m; q++) out[((ch * m + q) * kh + i) * kw + j] = f[((i * kw + j) * c + ch) * m + q];
  return out;
}


function conv(ctx: OpContext, inputs: Value[], depthwise: boolean, fused: boolean): Value[] {
  nhwcOnly(ctx);
  const x = ctx.input(inputs, 0);
  const filter = ctx.input(inputs, 1);
  if (!filter.data || filter.dtype !== "float32") return ctx.fail("the filter must be a float32 constant");
  const [kh, kw, ci, co] = filter.shape;
  const st = ctx.attrs.ints("strides", [1, 1, 1, 1]);
  const dl = ctx.attrs.ints("dilations", [1, 1, 1, 1]);
  const win = windowAttrs(x, [kh, kw], [st[1], st[2]], [dl[1], dl[2]], padding(ctx));
  let bias: Value | null = null;
  let act = "";
  let alpha: Value | undefined;
  if (fused) {
    const ops = ctx.attrs.strs("fused_ops").map((s) => s.toLowerCase());
    const args = inputs.slice(2);
    if (ops[0] === "biasadd") {
      bias = args[0] ?? ctx.fail("BiasAdd needs a bias argument", "INVALID_ARGUMENT");
      act = ops[1] ?? "";
      alpha = args[1];
    } else if (ops[0] === "fusedbatchnorm") {
      return ctx.fail("fused FusedBatchNorm is not supported (TF.js does not run it either)");
    } else {
      act = ops[0] ?? "";
      alpha = args[0];
    }
    if (ops.length > 2) ctx.fail(`fused_ops [${ops.join(", ")}] is not supported`);
  }
  const cout = depthwise ? ci * co : co;
  const weights = depthwise
    ? ctx.g.constant("float32", [cout, 1, kh, kw], depthwiseWeights(filter.data as Float32Array, filter.shape))
    : ctx.g.constant("float32", [co, ci, kh, kw], convWeights(filter.data as Float32Array, filter.shape));
  const cin = x.shape[3];
  const group = depthwise ? ci : cin > 0 && cin !== ci ? cin / ci : 1;
  if (bias && bias.dtype !== "float32") ctx.fail("bias must be float32", "INVALID_ARGUMENT");
  const xn = ctx.toNchw(x);
  const attrs: Record<string, Attr> = { ...win.attrs, dilations: { ints: [dl[1], dl[2]] }, group: { i: group } };
  let y = ctx.op1("Conv", [xn, weights, bias], attrs, { dtype: "float32", shape: [x.shape[0], cout, win.h, win.w] }, "/conv");
  y = fusedActivation(ctx, y, act, alpha, "channels-first");
  return [ctx.lazyNhwc(y)];
}

function pool(ctx: OpContext, inputs: Value[], type: "MaxPool" | "AveragePool"): Value[] {
  nhwcOnly(ctx);
  const x = ctx.input(inputs, 0);
  const k = ctx.attrs.ints("ksize");
  const st = ctx.attrs.ints("strides");
  if (k[0] !== 1 || k[3] !== 1 || st[0] !== 1 || st[3] !== 1) ctx.fail("pooling over batch or channels is not supported");
  const win = windowAttrs(x, [k[1], k[2]], [st[1], st[2]], [1, 1], padding(ctx));
  // TF's SAME average pooling ignores padded cells: ONNX count_include_pad = 0 (the default).
  const y = ctx.op1(type, [ctx.toNchw(x)], win.attrs, { dtype: x.dtype, shape: [x.shape[0], x.shape[3], win.h, win.w] }, "/pool");
  return [ctx.lazyNhwc(y)];
}

function resize(ctx: OpContext, inputs: Value[], mode: "linear" | "nearest"): Value[] {
  const x = ctx.input(inputs, 0);
  const size = ctx.input(inputs, 1);
  const alignCorners = ctx.attrs.bool("align_corners");
  const halfPixel = ctx.attrs.bool("half_pixel_centers");
  const attrs: Record<string, Attr> = { mode: { s: mode } };
  if (mode === "linear") {
    attrs.coordinate_transformation_mode = { s: alignCorners ? "align_corners" : halfPixel ? "half_pixel" : "asymmetric" };
  } else {
    attrs.coordinate_transformation_mode = { s: alignCorners ? "align_corners" : halfPixel ? "tf_half_pixel_for_nn" : "asymmetric" };
    attrs.nearest_mode = { s: alignCorners ? "round_prefer_ceil" : "floor" };
  }
  const xn = ctx.toNchw(x);
  const [n, , , c] = x.shape;
  let sizes: Value;
  let hw = [-1, -1];
  if (size.data && n > 0 && c > 0) {
    hw = numbers(size.data);
    sizes = ctx.g.int64([n, c, hw[0], hw[1]]);
  } else {
    if (size.data) hw = numbers(size.data);
    const shape = ctx.op1("Shape", [xn], {}, { dtype: "int64", shape: [4] }, "/shape");
    const nc = ctx.op1("Slice", [shape, ctx.g.int64([0]), ctx.g.int64([2])], {}, { dtype: "int64", shape: [2] }, "/nc");
    sizes = ctx.op1("Concat", [nc, ctx.int64(size)], { axis: { i: 0 } }, { dtype: "int64", shape: [4] }, "/sizes");
  }
  const y = ctx.op1("Resize", [xn, null, null, sizes], attrs, { dtype: x.dtype, shape: [n, c, hw[0], hw[1]] }, "/resize");
  return [ctx.lazyNhwc(y)];
}

/** TF conv2d_transpose: inputs (output sizes, filter [kh, kw, out_c, in_c], x); ONNX ConvTranspose. */
const conv2dBackpropInput: Translator = (ctx, inputs) => {
  nhwcOnly(ctx);
  const sizes = ctx.constInts(ctx.input(inputs, 0), "input_sizes");
  const filter = ctx.input(inputs, 1);
  const x = ctx.input(inputs, 2);
  if (!filter.data || filter.dtype !== "float32") return ctx.fail("the filter must be a float32 constant");
  const [kh, kw, co, ci] = filter.shape;
  const st = ctx.attrs.ints("strides", [1, 1, 1, 1]);
  const dl = ctx.attrs.ints("dilations", [1, 1, 1, 1]);
  const pad = padding(ctx);
  const pads = [0, 0, 0, 0];
  const extra = [0, 0];
  for (const axis of [0, 1] as const) {
    const inp = x.shape[axis + 1];
    const out = sizes[axis + 1];
    if (inp < 0) return ctx.fail("the input's spatial size must be known");
    const ek = ([kh, kw][axis] - 1) * dl[axis + 1] + 1;
    // The forward conv (out -> inp) had these pads; the transpose uses the same ones.
    const fwd = pad.kind === "EXPLICIT" ? { before: pad.pads[axis], after: pad.pads[axis + 2] } : spatial(out, [kh, kw][axis], st[axis + 1], dl[axis + 1], pad, axis);
    if (!fwd) return ctx.fail("output sizes must be known");
    pads[axis] = fwd.before;
    pads[axis + 2] = fwd.after;
    extra[axis] = out - (st[axis + 1] * (inp - 1) + ek - fwd.before - fwd.after);
    if (extra[axis] < 0) return ctx.fail(`output size ${out} cannot come from input size ${inp}`, "INVALID_ARGUMENT");
  }
  // TF [kh, kw, out_c, in_c] -> ONNX [in_c, out_c, kh, kw]
  const f = filter.data as Float32Array;
  const w = new Float32Array(f.length);
  for (let i = 0; i < kh; i++)
    for (let j = 0; j < kw; j++)
      for (let o = 0; o < co; o++) for (let c = 0; c < ci; c++) w[((c * co + o) * kh + i) * kw + j] = f[((i * kw + j) * co + o) * ci + c];
  const attrs: Record<string, Attr> = {
    kernel_shape: { ints: [kh, kw] },
    strides: { ints: [st[1], st[2]] },
    dilations: { ints: [dl[1], dl[2]] },
    pads: { ints: pads },
    output_padding: { ints: extra },
  };
  const y = ctx.op1("ConvTranspose", [ctx.toNchw(x), ctx.g.constant("float32", [ci, co, kh, kw], w)], attrs, { dtype: "float32", shape: [x.shape[0], co, sizes[1], sizes[2]] }, "/deconv");
  return [ctx.lazyNhwc(y)];
};

/** DepthToSpace: TF's NHWC channel order is ONNX's DCR order on NCHW. */
const depthToSpace: Translator = (ctx, inputs) => {
  nhwcOnly(ctx);
  const x = ctx.input(inputs, 0);
  const bs = ctx.attrs.int("block_size");
  const [n, h, w, c] = x.shape;
  const shape = [n, c < 0 ? -1 : c / (bs * bs), h < 0 ? -1 : h * bs, w < 0 ? -1 : w * bs];
  return [ctx.lazyNhwc(ctx.op1("DepthToSpace", [ctx.toNchw(x)], { blocksize: { i: bs }, mode: { s: "DCR" } }, { dtype: x.dtype, shape }))];
};

/** Inference-mode batch norm over the last (channel) axis: y = (x - mean) * scale / sqrt(var + eps) + offset. */
const fusedBatchNorm: Translator = (ctx, inputs) => {
  nhwcOnly(ctx);
  const [x, scale, offset, mean, variance] = inputs;
  if (!scale?.data || !offset?.data || !mean?.data || !variance?.data) return ctx.fail("scale, offset, mean and variance must be constants");
  const eps = ctx.attrs.float("epsilon", 1e-3);
  const s = numbers(scale.data);
  const o = numbers(offset.data);
  const m = numbers(mean.data);
  const v = numbers(variance.data);
  const mul = s.map((sc, k) => sc / Math.sqrt(v[k] + eps));
  const add = o.map((of, k) => of - m[k] * mul[k]);
  const y = ctx.elementwise("Mul", [x, ctx.g.constant("float32", [mul.length], mul)], {}, { dtype: "float32", shape: x.shape }, "/bn_mul");
  return [ctx.elementwise("Add", [y, ctx.g.constant("float32", [add.length], add)], {}, { dtype: "float32", shape: x.shape }, "/bn_add")];
};

export const convOps: Record<string, Translator> = {
  Conv2D: (ctx, i) => conv(ctx, i, false, false),
  _FusedConv2D: (ctx, i) => conv(ctx, i, false, true),
  DepthwiseConv2dNative: (ctx, i) => conv(ctx, i, true, false),
  FusedDepthwiseConv2dNative: (ctx, i) => conv(ctx, i, true, true),
  MaxPool: (ctx, i) => pool(ctx, i, "MaxPool"),
  AvgPool: (ctx, i) => pool(ctx, i, "AveragePool"),
  ResizeBilinear: (ctx, i) => resize(ctx, i, "linear"),
  ResizeNearestNeighbor: (ctx, i) => resize(ctx, i, "nearest"),
  Conv2DBackpropInput: conv2dBackpropInput,
  DepthToSpace: depthToSpace,
  FusedBatchNorm: fusedBatchNorm,
  FusedBatchNormV3: fusedBatchNorm,
};

