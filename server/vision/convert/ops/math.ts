/**
 * Element-wise ops (unary, binary with NumPy/TF broadcasting, comparisons, logic, Select, Cast)
 * and matrix products. Element-wise ops run on NHWC tensors as TF does, or on the NCHW twins of
 * conv outputs when an operand has one (OpContext.elementwise); axis-bound ops (Softmax, MatMul)
 * always see NHWC.
 */
import type { OpContext, Translator } from "../context";
import { broadcastShape, foldBinary, foldUnary, jsOps } from "../fold";
import type { Value } from "../onnx-graph";
import { fusedActivation } from "./activation";
import type { DType } from "../tfjs-model";

function binaryShape(ctx: OpContext, a: Value, b: Value): number[] {
  try {
    return broadcastShape(a.shape, b.shape);
  } catch (e) {
    return ctx.fail((e as Error).message, "INVALID_ARGUMENT");
  }
}

/** A binary op that maps onto one ONNX op (folded in JS when both sides are small constants). */
function binary(onnxOp: string, js: keyof typeof jsOps, resultBool = false): Translator {
  return (ctx, inputs) => {
    const a = ctx.input(inputs, 0);
    const b = ctx.input(inputs, 1);
    const dtype: DType = resultBool ? "bool" : a.dtype;
    const isInt = a.dtype === "int32" || a.dtype === "int64";
    const folded = foldBinary(ctx.g, a, b, dtype, (x, y) => jsOps[js](x, y, isInt));
    if (folded) return [folded];
    return [ctx.elementwise(onnxOp, [a, b], {}, { dtype, shape: binaryShape(ctx, a, b) })];
  };
}

const floorDiv: Translator = (ctx, inputs) => {
  const [a, b] = [ctx.input(inputs, 0), ctx.input(inputs, 1)];
  const folded = foldBinary(ctx.g, a, b, a.dtype, (x, y) => Math.floor(x / y));
  if (folded) return [folded];
  const out = { dtype: a.dtype, shape: binaryShape(ctx, a, b) };
  if (a.dtype === "float32") {
    const q = ctx.elementwise("Div", [a, b], {}, out, "/div");
    return [ctx.elementwise("Floor", [q], {}, out)];
  }
  // Integers: (a - floormod(a, b)) / b is exact, and ONNX Mod (fmod=0) is the floor modulo.
  const m = ctx.elementwise("Mod", [a, b], { fmod: { i: 0 } }, out, "/mod");
  const d = ctx.elementwise("Sub", [a, m], {}, out, "/sub");
  return [ctx.elementwise("Div", [d, b], {}, out)];
};

const floorMod: Translator = (ctx, inputs) => {
  const [a, b] = [ctx.input(inputs, 0), ctx.input(inputs, 1)];
  const folded = foldBinary(ctx.g, a, b, a.dtype, (x, y) => x - y * Math.floor(x / y));
  if (folded) return [folded];
  const out = { dtype: a.dtype, shape: binaryShape(ctx, a, b) };
  if (a.dtype !== "float32") return [ctx.elementwise("Mod", [a, b], { fmod: { i: 0 } }, out)];
  const q = ctx.elementwise("Floor", [ctx.elementwise("Div", [a, b], {}, out, "/div")], {}, out, "/floor");
  return [ctx.elementwise("Sub", [a, ctx.elementwise("Mul", [b, q], {}, out, "/mul")], {}, out)];
};

const realDiv: Translator = (ctx, inputs) => (ctx.input(inputs, 0).dtype === "float32" ? binary("Div", "Div")(ctx, inputs) : floorDiv(ctx, inputs));

/** x / y, and 0 where y is 0. */
const divNoNan: Translator = (ctx, inputs) => {
  const [a, b] = [ctx.input(inputs, 0), ctx.input(inputs, 1)];
  const out = { dtype: a.dtype, shape: binaryShape(ctx, a, b) };
  const zero = ctx.g.scalar(a.dtype, 0);
  const isZero = ctx.elementwise("Equal", [b, zero], {}, { dtype: "bool", shape: b.shape }, "/y0");
  const safe = ctx.elementwise("Where", [isZero, ctx.g.scalar(a.dtype, 1), b], {}, { dtype: a.dtype, shape: b.shape }, "/y");
  const q = realDiv(ctx, [a, safe])[0];
  return [ctx.elementwise("Where", [isZero, zero, q], {}, out)];
};

const squaredDifference: Translator = (ctx, inputs) => {
  const [a, b] = [ctx.input(inputs, 0), ctx.input(inputs, 1)];
  const folded = foldBinary(ctx.g, a, b, a.dtype, (x, y) => jsOps.SquaredDifference(x, y, false));
  if (folded) return [folded];
  const out = { dtype: a.dtype, shape: binaryShape(ctx, a, b) };
  const d = ctx.elementwise("Sub", [a, b], {}, out, "/sub");
  return [ctx.elementwise("Mul", [d, d], {}, out)];
};

const notEqual: Translator = (ctx, inputs) => {
  const [a, b] = [ctx.input(inputs, 0), ctx.input(inputs, 1)];
  const folded = foldBinary(ctx.g, a, b, "bool", (x, y) => jsOps.NotEqual(x, y, false));
  if (folded) return [folded];
  const out = { dtype: "bool" as DType, shape: binaryShape(ctx, a, b) };
  return [ctx.elementwise("Not", [ctx.elementwise("Equal", [a, b], {}, out, "/eq")], {}, out)];
};

/** A unary op mapping to one ONNX op; `js` folds constants. */
function unary(onnxOp: string, js?: (x: number) => number, attrs: (ctx: OpContext) => Record<string, { f: number } | { i: number }> = () => ({})): Translator {
  return (ctx, inputs) => {
    const x = ctx.input(inputs, 0);
    const folded = js ? foldUnary(ctx.g, x, x.dtype, js) : null;
    if (folded) return [folded];
    return [ctx.elementwise(onnxOp, [x], attrs(ctx), { dtype: x.dtype, shape: x.shape })];
  };
}

const identity: Translator = (_ctx, inputs) => [inputs[0]];

const relu6: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  return [ctx.elementwise("Clip", [x, ctx.g.scalar("float32", 0), ctx.g.scalar("float32", 6)], {}, { dtype: x.dtype, shape: x.shape })];
};

const rsqrt: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const out = { dtype: x.dtype, shape: x.shape };
  return [ctx.elementwise("Reciprocal", [ctx.elementwise("Sqrt", [x], {}, out, "/sqrt")], {}, out)];
};

const square: Translator = (ctx, inputs) => {
  const x = ctx.input(inputs, 0);
  const folded = foldUnary(ctx.g, x, x.dtype, (v) => v * v);
  return [folded ?? ctx.elementwise("Mul", [x, x], {}, { dtype: x.dtype, shape: x.shape })];
};

const prelu: Translator = (ctx, inputs) => {
  const [x, alpha] = [ctx.input(inputs, 0), ctx.input(inputs, 1)];
  return [ctx.elementwise("PRelu", [x, alpha], {}, { dtype: x.dtype, shape: x.shape })];
};

const softmax =
  (onnxOp: string): Translator =>
  (ctx, inputs) => {
    const x = ctx.input(inputs, 0);
    return [ctx.op1(onnxOp, [x], { axis: { i: -1 } }, { dtype: x.dtype, shape: x.shape })];
  };

const cast: Translator = (ctx, inputs) => [ctx.cast(ctx.input(inputs, 0), ctx.attrs.dtype("DstT"))];

const addN: Translator = (ctx, inputs) => {
  let acc = ctx.input(inputs, 0);
  for (let k = 1; k < inputs.length; k++) acc = binary("Add", "Add")(ctx, [acc, inputs[k]])[0];
  return [acc];
};

const clipByValue: Translator = (ctx, inputs) => {
  const [x, lo, hi] = [ctx.input(inputs, 0), ctx.input(inputs, 1), ctx.input(inputs, 2)];
  const out = { dtype: x.dtype, shape: x.shape };
  if (lo.shape.length === 0 && hi.shape.length === 0) return [ctx.elementwise("Clip", [x, lo, hi], {}, out)];
  return [ctx.elementwise("Min", [ctx.elementwise("Max", [x, lo], {}, out, "/max"), hi], {}, out)];
};

/** Select (TF1: a vector condition picks rows) and SelectV2 (broadcasting). */
const select: Translator = (ctx, inputs) => {
  let [c, a, b] = [ctx.input(inputs, 0), ctx.input(inputs, 1), ctx.input(inputs, 2)];
  if (ctx.node.op === "Select" && c.shape.length === 1 && a.shape.length > 1) {
    const axes = Array.from({ length: a.shape.length - 1 }, (_, k) => k + 1);
    c = ctx.op1("Unsqueeze", [c, ctx.g.int64(axes)], {}, { dtype: "bool", shape: [c.shape[0], ...axes.map(() => 1)] }, "/cond");
  }
  const shape = broadcastShape(broadcastShape(c.shape, a.shape), b.shape);
  return [ctx.elementwise("Where", [c, a, b], {}, { dtype: a.dtype, shape })];
};


function matmul(ctx: OpContext, inputs: Value[], ta: string, tb: string, fused: boolean): Value[] {
  let [a, b] = [ctx.input(inputs, 0), ctx.input(inputs, 1)];
  const swapLast = (v: Value) => {
    const r = v.shape.length;
    const perm = [...Array(r).keys()];
    [perm[r - 2], perm[r - 1]] = [perm[r - 1], perm[r - 2]];
    return ctx.transpose(v, perm);
  };
  if (ctx.attrs.bool(ta)) a = swapLast(a);
  if (ctx.attrs.bool(tb)) b = swapLast(b);
  const batch = broadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2));
  let y = ctx.op1("MatMul", [a, b], {}, { dtype: a.dtype, shape: [...batch, a.shape.at(-2)!, b.shape.at(-1)!] }, fused ? "/matmul" : "");
  if (fused) {
    const ops = ctx.attrs.strs("fused_ops").map((s) => s.toLowerCase());
    let k = 2;
    if (ops[0] === "biasadd") y = ctx.op1("Add", [y, ctx.input(inputs, k++)], {}, { dtype: y.dtype, shape: y.shape }, "/bias");
    y = fusedActivation(ctx, y, ops[ops[0] === "biasadd" ? 1 : 0] ?? "", inputs[k], "channels-last");
  }
  return [y];
}

export const mathOps: Record<string, Translator> = {
  Identity: identity,
  StopGradient: identity,
  Snapshot: identity,
  Add: binary("Add", "Add"),
  AddV2: binary("Add", "Add"),
  BiasAdd: binary("Add", "Add"),
  AddN: addN,
  Sub: binary("Sub", "Sub"),
  Mul: binary("Mul", "Mul"),
  RealDiv: realDiv,
  Div: realDiv,
  DivNoNan: divNoNan,
  FloorDiv: floorDiv,
  FloorMod: floorMod,
  Mod: floorMod, // as TF.js runs it (floor modulo; TF's own Mod truncates)
  Maximum: binary("Max", "Max"),
  Minimum: binary("Min", "Min"),
  Pow: binary("Pow", "Pow"),
  SquaredDifference: squaredDifference,
  Equal: binary("Equal", "Equal", true),
  NotEqual: notEqual,
  Less: binary("Less", "Less", true),
  LessEqual: binary("LessOrEqual", "LessEqual", true),
  Greater: binary("Greater", "Greater", true),
  GreaterEqual: binary("GreaterOrEqual", "GreaterEqual", true),
  LogicalAnd: binary("And", "And", true),
  LogicalOr: binary("Or", "Or", true),
  LogicalNot: unary("Not", (x) => (x ? 0 : 1)),
  Select: select,
  SelectV2: select,
  Cast: cast,
  Relu: unary("Relu", (x) => Math.max(0, x)),
  Relu6: relu6,
  Elu: unary("Elu", undefined, () => ({ alpha: { f: 1 } })),
  Selu: unary("Selu"),
  LeakyRelu: unary("LeakyRelu", undefined, (ctx) => ({ alpha: { f: ctx.attrs.float("alpha", 0.2) } })),
  Prelu: prelu,
  Sigmoid: unary("Sigmoid"),
  Tanh: unary("Tanh"),
  Softplus: unary("Softplus"),
  Exp: unary("Exp", Math.exp),
  Log: unary("Log", Math.log),
  Sqrt: unary("Sqrt", Math.sqrt),
  Rsqrt: rsqrt,
  Square: square,
  Neg: unary("Neg", (x) => -x),
  Abs: unary("Abs", Math.abs),
  Floor: unary("Floor", Math.floor),
  Ceil: unary("Ceil", Math.ceil),
  Round: unary("Round"),
  Reciprocal: unary("Reciprocal", (x) => 1 / x),
  Sign: unary("Sign", Math.sign),
  Sin: unary("Sin"),
  Cos: unary("Cos"),
  Erf: unary("Erf"),
  IsNan: (ctx, inputs) => [ctx.op1("IsNaN", [ctx.input(inputs, 0)], {}, { dtype: "bool", shape: ctx.input(inputs, 0).shape })],
  Softmax: softmax("Softmax"),
  LogSoftmax: softmax("LogSoftmax"),
  ClipByValue: clipByValue,
  MatMul: (ctx, i) => matmul(ctx, i, "transpose_a", "transpose_b", false),
  _FusedMatMul: (ctx, i) => matmul(ctx, i, "transpose_a", "transpose_b", true),
  BatchMatMul: (ctx, i) => matmul(ctx, i, "adj_x", "adj_y", false),
  BatchMatMulV2: (ctx, i) => matmul(ctx, i, "adj_x", "adj_y", false),
};
