/** Reductions (Mean/Sum/Max/Min/Prod/All/Any), ArgMax/ArgMin and TopKV2. */
import { NCHW_AXIS, NHWC_TO_NCHW, type OpContext, type Translator, permute } from "../context";
import type { Attr, Value } from "../onnx-graph";
import { axisOf } from "./shape";

function reduceAxes(ctx: OpContext, x: Value, axesInput: Value): { axes: number[]; shape: number[]; keep: boolean } {
  const r = x.shape.length;
  const axes = [...new Set(ctx.constInts(axesInput, "reduction axes").map((a) => axisOf(a, r)))].sort((a, b) => a - b);
  const keep = ctx.attrs.bool("keep_dims");
  const shape = keep ? x.shape.map((d, k) => (axes.includes(k) ? 1 : d)) : x.shape.filter((_, k) => !axes.includes(k));
  return { axes, shape, keep };
}

function reduce(onnxOp: string): Translator {
  return (ctx, inputs) => {
    const x = ctx.input(inputs, 0);
    const { axes, shape, keep } = reduceAxes(ctx, x, ctx.input(inputs, 1));
    if (!axes.length) return [x];
    const attrsFor = (ax: number[]): Record<string, Attr> => (onnxOp === "ReduceSum" ? {} : { axes: { ints: ax } });
    const axesInput = (ax: number[]) => (onnxOp === "ReduceSum" ? [ctx.g.int64(ax)] : []);
    if (x.nchw && x.shape.length === 4) {
      // Reduce the NCHW twin when the result's dim order is the same in both layouts (or kept 4-D).
      const nAxes = axes.map((a) => NCHW_AXIS[a]).sort((a, b) => a - b);
      const keptNhwc = [0, 1, 2, 3].filter((a) => !axes.includes(a));
      const keptNchw = NHWC_TO_NCHW.filter((a) => !axes.includes(a));
      if (keep || keptNhwc.join() === keptNchw.join()) {
        const nShape = keep ? permute(shape, NHWC_TO_NCHW) : shape;
        const y = ctx.op1(onnxOp, [x.nchw, ...axesInput(nAxes)], { ...attrsFor(nAxes), keepdims: { i: keep ? 1 : 0 } }, { dtype: x.dtype, shape: nShape });
        return [keep ? ctx.lazyNhwc(y) : y];
      }
    }
    // Opset 13: ReduceSum takes axes as an input, the others as an attribute.
    if (onnxOp === "ReduceSum") return [ctx.op1(onnxOp, [x, ctx.g.int64(axes)], { keepdims: { i: keep ? 1 : 0 } }, { dtype: x.dtype, shape })];
    return [ctx.op1(onnxOp, [x], { axes: { ints: axes }, keepdims: { i: keep ? 1 : 0 } }, { dtype: x.dtype, shape })];
  };
}

/** All/Any over booleans: min/max of the values as int32. */
function reduceBool(onnxOp: "ReduceMin" | "ReduceMax"): Translator {
  return (ctx, inputs) => {
    const x = ctx.input(inputs, 0);
    const { axes, shape, keep } = reduceAxes(ctx, x, ctx.input(inputs, 1));
    const y = ctx.op1(onnxOp, [ctx.cast(x, "int32")], { axes: { ints: axes }, keepdims: { i: keep ? 1 : 0 } }, { dtype: "int32", shape }, "/int");
    return [ctx.cast(y, "bool")];
  };
}

function argReduce(onnxOp: "ArgMax" | "ArgMin"): Translator {
  return (ctx, inputs) => {
    const x = ctx.input(inputs, 0);
    const [a] = ctx.constInts(ctx.input(inputs, 1), "dimension");
    const axis = axisOf(a, x.shape.length);
    const shape = x.shape.filter((_, k) => k !== axis);
    const y = ctx.op1(onnxOp, [x], { axis: { i: axis }, keepdims: { i: 0 } }, { dtype: "int64", shape }, "/int64");
    return [ctx.cast(y, "int32")];
  };
}

const topK: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const k = ctx.input(inputs, 1);
  const kConst = k.data ? ctx.constInts(k, "k")[0] : -1;
  const kv = k.data ? ctx.g.int64([kConst]) : ctx.op1("Reshape", [ctx.int64(k), ctx.g.int64([1])], {}, { dtype: "int64", shape: [1] }, "/k");
  const shape = [...x.shape.slice(0, -1), kConst];
  const [values, indices] = ctx.g.op(
    "TopK",
    [x, kv],
    { axis: { i: -1 }, largest: { i: 1 }, sorted: { i: 1 } },
    [
      { dtype: x.dtype, shape },
      { dtype: "int64", shape },
    ],
    ctx.hint,
  );
  return [values, ctx.cast(indices, "int32")];
};

export const reduceOps: Record<string, Translator> = {
  Mean: reduce("ReduceMean"),
  Sum: reduce("ReduceSum"),
  Max: reduce("ReduceMax"),
  Min: reduce("ReduceMin"),
  Prod: reduce("ReduceProd"),
  All: reduceBool("ReduceMin"),
  Any: reduceBool("ReduceMax"),
  ArgMax: argReduce("ArgMax"),
  ArgMin: argReduce("ArgMin"),
  TopKV2: topK,
};
