/**
 * What an op translator gets: the ONNX graph being built, the TF node and its attributes, and
 * helpers shared by translators (constants, casts, layout).
 *
 * Layout: TF tensors are NHWC, ONNX Conv/Pool/Resize want NCHW. Spatial ops return a lazy NHWC
 * value carrying its NCHW twin (`Value.nchw`); element-wise ops, Concat, Pad and spatial means
 * whose inputs have twins stay in NCHW, so a chain of conv blocks runs without Transposes and one
 * is emitted only where an NHWC consumer (Reshape, an output...) really needs the data.
 */
import { ObscuraError } from "@/lib/errors";
import { count } from "./fold";
import { type Attr, type OnnxGraph, type Value, numbers } from "./onnx-graph";
import { Attrs, type DType, type TfNode } from "./tfjs-model";

export type Translator = (ctx: OpContext, inputs: Value[]) => Value[];

export const NHWC_TO_NCHW = [0, 3, 1, 2];
export const NCHW_TO_NHWC = [0, 2, 3, 1];
/** NHWC axis -> NCHW axis. */
export const NCHW_AXIS = [0, 2, 3, 1];

export const permute = (shape: number[], perm: number[]) => perm.map((p) => shape[p]);

export class OpContext {
  readonly attrs: Attrs;
  constructor(
    readonly g: OnnxGraph,
    readonly node: TfNode,
  ) {
    this.attrs = new Attrs(node);
  }

  get hint(): string {
    return this.node.name;
  }

  /** A conversion error naming the node. */
  fail(message: string, status: "INVALID_ARGUMENT" | "UNIMPLEMENTED" = "UNIMPLEMENTED"): never {
    throw new ObscuraError(status, `TF op ${this.node.op} (node "${this.node.name}"): ${message}`);
  }

  input(inputs: Value[], k: number): Value {
    const v = inputs[k];
    if (!v) this.fail(`expects at least ${k + 1} inputs, got ${inputs.length}`, "INVALID_ARGUMENT");
    return v;
  }

  /** Elements of an input that must be known at conversion time (axes, perms, slice bounds...). */
  constInts(v: Value, what: string): number[] {
    if (!v.data) this.fail(`${what} must be a constant in this converter`);
    return numbers(v.data);
  }

  op1(type: string, inputs: Array<Value | null>, attrs: Record<string, Attr>, out: { dtype: DType; shape: number[] }, suffix = ""): Value {
    return this.g.op1(type, inputs, attrs, out, this.hint + suffix);
  }

  cast(v: Value, to: DType): Value {
    if (v.dtype === to) return v;
    if (v.data) {
      const src = numbers(v.data);
      const vals = to === "bool" ? src.map((x) => (x ? 1 : 0)) : to === "float32" ? src : src.map((x) => Math.trunc(x));
      return this.g.constant(to, v.shape, vals);
    }
    if (v.nchw) return this.lazyNhwc(this.op1("Cast", [v.nchw], { to: { i: castTo(to) } }, { dtype: to, shape: v.nchw.shape }, "/cast"));
    return this.op1("Cast", [v], { to: { i: castTo(to) } }, { dtype: to, shape: v.shape }, "/cast");
  }

  /** ONNX wants int64 for shapes, pads, repeats, K...: constants are re-typed, others cast. */
  int64(v: Value): Value {
    return this.cast(v, "int64");
  }

  transpose(v: Value, perm: number[], suffix = "/transpose"): Value {
    return this.op1("Transpose", [v], { perm: { ints: perm } }, { dtype: v.dtype, shape: permute(v.shape, perm) }, suffix);
  }

  /** The NCHW form of a 4-D NHWC value (its twin, or a Transpose remembered for other consumers). */
  toNchw(v: Value): Value {
    if (v.shape.length !== 4) this.fail(`expects a 4-D NHWC tensor, got rank ${v.shape.length}`, "INVALID_ARGUMENT");
    if (!v.nchw) v.nchw = v.data ? this.g.constant(v.dtype, permute(v.shape, NHWC_TO_NCHW), transposeData(v)) : this.transpose(v, NHWC_TO_NCHW, "/to_nchw");
    return v.nchw;
  }

  /** The NHWC value whose data lives in NCHW `y` (emitted as a Transpose only when used). */
  lazyNhwc(y: Value): Value {
    return { dtype: y.dtype, shape: permute(y.shape, NCHW_TO_NHWC), nchw: y };
  }

  /**
   * `v` as an operand of an NCHW element-wise op whose other operand is 4-D NCHW: its twin, a
   * transposed 4-D tensor, or a constant broadcasting over channels only ([C], [1,1,1,C]...) or
   * a scalar. Null when `v` cannot take part (then the op runs in NHWC).
   */
  nchwOperand(v: Value): Value | null {
    if (v.nchw) return v.nchw;
    if (v.data) {
      const c = v.shape.at(-1) ?? 1;
      if (count(v.shape) === 1) return v.shape.length ? this.g.constant(v.dtype, [], v.data) : v;
      if (count(v.shape) === c) return this.g.constant(v.dtype, [c, 1, 1], v.data);
      return v.shape.length === 4 ? this.toNchw(v) : null;
    }
    return v.shape.length === 4 ? this.toNchw(v) : null;
  }

  /** An element-wise ONNX op over NHWC operands, run in NCHW when an operand already is. */
  elementwise(type: string, operands: Value[], attrs: Record<string, Attr>, out: { dtype: DType; shape: number[] }, suffix = ""): Value {
    if (out.shape.length === 4 && operands.some((v) => v.nchw)) {
      const ns = operands.map((v) => this.nchwOperand(v));
      if (ns.every((v): v is Value => v !== null)) {
        return this.lazyNhwc(this.op1(type, ns, attrs, { dtype: out.dtype, shape: permute(out.shape, NHWC_TO_NCHW) }, suffix));
      }
    }
    return this.op1(type, operands, attrs, out, suffix);
  }
}

/** A constant NHWC tensor's data in NCHW order. */
function transposeData(v: Value): number[] {
  const [n, h, w, c] = v.shape;
  const src = numbers(v.data!);
  const out = new Array<number>(src.length);
  for (let a = 0; a < n; a++)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) for (let k = 0; k < c; k++) out[((a * c + k) * h + y) * w + x] = src[((a * h + y) * w + x) * c + k];
  return out;
}

/** ONNX TensorProto.DataType numbers for Cast's `to`. */
function castTo(d: DType): number {
  return { float32: 1, int32: 6, int64: 7, bool: 9 }[d];
}
