/**
 * A small ONNX graph builder and writer (protobuf classes from onnx-proto). Values carry their
 * dtype and shape (-1 = unknown dim, rank always known); compile-time constants keep their data
 * in JS and become initializers only when a node actually reads them.
 */
import onnxProto from "onnx-proto";
import type { ConstTensor, DType, TensorData } from "./tfjs-model";

const { onnx } = onnxProto;

/** 14 for HardSwish; everything else used exists since 13. */
export const OPSET = 14;
/** IR version 8 is what onnx-proto 8 (ONNX 1.10) describes; onnxruntime 1.30 reads it. */
const IR_VERSION = 8;

export interface Value {
  dtype: DType;
  /** NHWC/TF order; -1 marks an unknown dim. */
  shape: number[];
  /** ONNX tensor name, set once the value exists in the graph. */
  name?: string;
  /** Known at conversion time (from weights or folded). */
  data?: TensorData;
  /**
   * The same tensor in NCHW order, for 4-D activations. A value with `nchw` but no `name` is
   * lazy: its NHWC form is only emitted (as a Transpose) if some consumer needs it.
   */
  nchw?: Value;
}

export type Attr =
  | { i: number }
  | { f: number }
  | { s: string }
  | { ints: number[] }
  | { floats: number[] }
  | { t: ConstTensor };

export const INT64_MAX = Number.MAX_SAFE_INTEGER;
export const INT64_MIN = Number.MIN_SAFE_INTEGER;

const ELEM: Record<DType, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int32: onnx.TensorProto.DataType.INT32,
  int64: onnx.TensorProto.DataType.INT64,
  bool: onnx.TensorProto.DataType.BOOL,
};

export function tensorProto(name: string, t: ConstTensor): onnxProto.onnx.ITensorProto {
  const d = t.data;
  const raw = new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
  return { name, dims: t.shape, dataType: ELEM[t.dtype], rawData: Uint8Array.from(raw) };
}

export function makeData(dtype: DType, values: ArrayLike<number>): TensorData {
  switch (dtype) {
    case "float32":
      return Float32Array.from(values);
    case "int32":
      return Int32Array.from(values);
    case "int64":
      return BigInt64Array.from(Array.from(values, (v) => BigInt(Math.trunc(v))));
    case "bool":
      return Uint8Array.from(values, (v) => (v ? 1 : 0));
  }
}

/** A constant's elements as JS numbers. */
export function numbers(data: TensorData): number[] {
  return Array.from(data as ArrayLike<number | bigint>, (v) => Number(v));
}

export class OnnxGraph {
  private readonly nodes: onnxProto.onnx.INodeProto[] = [];
  private readonly initializers: onnxProto.onnx.ITensorProto[] = [];
  private readonly inputs: onnxProto.onnx.IValueInfoProto[] = [];
  private readonly outputs: onnxProto.onnx.IValueInfoProto[] = [];
  private readonly names = new Set<string>();
  /** Names set aside for graph outputs. */
  private readonly reserved = new Set<string>();
  /** Counts of ONNX op types in the encoded model (filled by `encode`). */
  readonly opCounts = new Map<string, number>();

  unique(base: string): string {
    let name = base || "v";
    for (let k = 1; this.names.has(name); k++) name = `${base}_${k}`;
    this.names.add(name);
    return name;
  }

  /** A compile-time constant (materialised on first use). */
  constant(dtype: DType, shape: number[], values: ArrayLike<number> | TensorData): Value {
    const data = ArrayBuffer.isView(values) && !(values instanceof DataView) && sameKind(dtype, values as TensorData) ? (values as TensorData) : makeData(dtype, values as ArrayLike<number>);
    return { dtype, shape, data };
  }

  int64(values: number[], shape: number[] = [values.length]): Value {
    return this.constant("int64", shape, values);
  }

  scalar(dtype: DType, v: number): Value {
    return this.constant(dtype, [], [v]);
  }

  /** The ONNX name of a value, creating its initializer if it is an unmaterialised constant. */
  ref(v: Value, hint = "const"): string {
    if (v.name) return v.name;
    if (v.nchw) {
      v.name = this.op1("Transpose", [v.nchw], { perm: { ints: [0, 2, 3, 1] } }, { dtype: v.dtype, shape: v.shape }, `${this.ref(v.nchw)}/nhwc`).name;
      return v.name!;
    }
    if (!v.data) throw new Error("internal: value has neither name nor data");
    const name = this.unique(hint);
    this.initializers.push(tensorProto(name, { dtype: v.dtype, shape: v.shape, data: v.data }));
    v.name = name;
    return name;
  }

  /** Emits one node; returns its outputs (dtype/shape as given by the translator). */
  op(type: string, inputs: Array<Value | null>, attrs: Record<string, Attr>, outs: Array<{ dtype: DType; shape: number[] }>, hint: string): Value[] {
    // Trailing omitted optional inputs are dropped (an explicit "" stops some onnxruntime fusions).
    while (inputs.length && inputs[inputs.length - 1] === null) inputs = inputs.slice(0, -1);
    const outNames = outs.map((_, k) => this.unique(outs.length > 1 ? `${hint}:${k}` : hint));
    this.nodes.push({
      name: this.unique(`${hint}#${type}`),
      opType: type,
      input: inputs.map((v, k) => (v ? this.ref(v, `${hint}/in${k}`) : "")),
      output: outNames,
      attribute: Object.entries(attrs).map(([name, a]) => attribute(name, a)),
    });
    return outs.map((o, k) => ({ dtype: o.dtype, shape: o.shape, name: outNames[k] }));
  }

  op1(type: string, inputs: Array<Value | null>, attrs: Record<string, Attr>, out: { dtype: DType; shape: number[] }, hint: string): Value {
    return this.op(type, inputs, attrs, [out], hint)[0];
  }

  addInput(name: string, dtype: DType, shape: number[]): Value {
    this.names.add(name);
    this.inputs.push(valueInfo(name, dtype, shape));
    return { dtype, shape, name };
  }

  /** Keeps `name` free for a later `addOutput` (graph outputs take the names they were asked for). */
  reserve(name: string): void {
    if (this.names.has(name)) throw new Error(`internal: name ${name} already used`);
    this.names.add(name);
    this.reserved.add(name);
  }

  /** Exposes `v` as a graph output called `name` (through an Identity node). */
  addOutput(name: string, v: Value): void {
    if (!this.reserved.has(name)) this.reserve(name);
    this.reserved.delete(name);
    this.nodes.push({ name: this.unique(`${name}#Identity`), opType: "Identity", input: [this.ref(v, `${name}/const`)], output: [name], attribute: [] });
    this.outputs.push(valueInfo(name, v.dtype, v.shape));
  }

  /** Drops nodes and initializers no graph output depends on (e.g. unused Transposes of lazy values). */
  private live(): { nodes: onnxProto.onnx.INodeProto[]; initializers: onnxProto.onnx.ITensorProto[] } {
    const needed = new Set(this.outputs.map((o) => o.name!));
    const nodes: onnxProto.onnx.INodeProto[] = [];
    for (let k = this.nodes.length - 1; k >= 0; k--) {
      const n = this.nodes[k];
      if (!n.output!.some((o) => needed.has(o))) continue;
      nodes.push(n);
      for (const i of n.input!) if (i) needed.add(i);
    }
    return { nodes: nodes.reverse(), initializers: this.initializers.filter((t) => needed.has(t.name!)) };
  }

  encode(meta: { producer: string; doc: string; props: Record<string, string> }): Uint8Array {
    const { nodes, initializers } = this.live();
    this.opCounts.clear();
    for (const n of nodes) this.opCounts.set(n.opType!, (this.opCounts.get(n.opType!) ?? 0) + 1);
    const model = onnx.ModelProto.create({
      irVersion: IR_VERSION,
      producerName: meta.producer,
      producerVersion: "1",
      docString: meta.doc,
      opsetImport: [{ domain: "", version: OPSET }],
      metadataProps: Object.entries(meta.props).map(([key, value]) => ({ key, value })),
      graph: {
        name: "main",
        node: nodes,
        initializer: initializers,
        input: this.inputs,
        output: this.outputs,
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }
}

function sameKind(dtype: DType, d: TensorData): boolean {
  switch (dtype) {
    case "float32":
      return d instanceof Float32Array;
    case "int32":
      return d instanceof Int32Array;
    case "int64":
      return d instanceof BigInt64Array;
    case "bool":
      return d instanceof Uint8Array;
  }
}

function valueInfo(name: string, dtype: DType, shape: number[]): onnxProto.onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: ELEM[dtype],
        shape: { dim: shape.map((d, k) => (d >= 0 ? { dimValue: d } : { dimParam: `${name.replace(/[^A-Za-z0-9_]/g, "_")}_d${k}` })) },
      },
    },
  };
}

function attribute(name: string, a: Attr): onnxProto.onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if ("i" in a) return { name, type: T.INT, i: a.i };
  if ("f" in a) return { name, type: T.FLOAT, f: a.f };
  if ("s" in a) return { name, type: T.STRING, s: new TextEncoder().encode(a.s) };
  if ("ints" in a) return { name, type: T.INTS, ints: a.ints };
  if ("floats" in a) return { name, type: T.FLOATS, floats: a.floats };
  return { name, type: T.TENSOR, t: tensorProto(name, a.t) };
}
