/**
 * Reading a TF.js graph model: `model.json` (format "graph-model": `modelTopology.node[]` with
 * op/input/attr, `weightsManifest` naming the .bin shards) and its weights, decoded to plain typed
 * arrays (float16 and uint8/uint16 affine-quantised weights are expanded the way TF.js does).
 * Also the attribute accessors every op translator uses.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";

/** Element types the converter carries (TF.js itself only knows float32, int32 and bool). */
export type DType = "float32" | "int32" | "int64" | "bool";

export type TensorData = Float32Array | Int32Array | BigInt64Array | Uint8Array;

export interface ConstTensor {
  dtype: DType;
  shape: number[];
  data: TensorData;
}

/** One attribute as stored in model.json (a protobuf AttrValue in JSON form). */
export interface TfAttr {
  s?: string;
  i?: string | number;
  f?: number;
  b?: boolean;
  type?: string;
  shape?: { dim?: Array<{ size?: string | number }>; unknownRank?: boolean };
  tensor?: { dtype?: string; tensorShape?: { dim?: Array<{ size?: string | number }> } };
  list?: { s?: string[]; i?: Array<string | number>; f?: number[]; b?: boolean[]; type?: string[] };
}

export interface TfNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, TfAttr>;
}

interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: "uint8" | "uint16" | "float16"; scale?: number; min?: number };
}

export interface GraphModelJson {
  format?: string;
  generatedBy?: string;
  convertedBy?: string;
  modelTopology: { node: TfNode[]; library?: { function?: unknown[] }; versions?: unknown };
  weightsManifest: Array<{ paths: string[]; weights: WeightSpec[] }>;
  signature?: {
    inputs?: Record<string, { name: string; dtype?: string; tensorShape?: { dim?: Array<{ size?: string }> } }>;
    outputs?: Record<string, { name: string; dtype?: string; tensorShape?: { dim?: Array<{ size?: string }> } }>;
  };
}

export interface GraphModel {
  file: string;
  json: GraphModelJson;
  nodes: Map<string, TfNode>;
  weights: Map<string, ConstTensor>;
}

export async function readGraphModel(jsonFile: string): Promise<GraphModel> {
  let json: GraphModelJson;
  try {
    json = JSON.parse(await fs.readFile(jsonFile, "utf8")) as GraphModelJson;
  } catch (e) {
    throw new ObscuraError("INVALID_ARGUMENT", `cannot read TF.js model ${jsonFile}: ${(e as Error).message}`, { cause: e });
  }
  if (!json.modelTopology || !Array.isArray(json.modelTopology.node)) {
    throw new ObscuraError("INVALID_ARGUMENT", `${jsonFile} is not a TF.js graph model (format "${json.format ?? "?"}"): modelTopology.node[] is missing`);
  }
  if (json.modelTopology.library?.function?.length) {
    throw new ObscuraError("UNIMPLEMENTED", `${jsonFile} uses TF functions (modelTopology.library.function), which the converter does not support`);
  }
  const nodes = new Map<string, TfNode>();
  for (const n of json.modelTopology.node) nodes.set(n.name, n);
  const weights = await readWeights(json.weightsManifest ?? [], path.dirname(jsonFile), jsonFile);
  return { file: jsonFile, json, nodes, weights };
}

/**
 * Decodes the weights of a TF.js weights manifest (the `weightsManifest` of a model.json, or a
 * standalone `*-weights_manifest.json` such as face-api's), shards resolved against `dir`.
 */
export async function readWeights(manifest: GraphModelJson["weightsManifest"], dir: string, file: string): Promise<Map<string, ConstTensor>> {
  const weights = new Map<string, ConstTensor>();
  for (const group of manifest) {
    const shards = await Promise.all(group.paths.map((p) => fs.readFile(path.join(dir, p))));
    const buf = Buffer.concat(shards);
    let offset = 0;
    for (const spec of group.weights) {
      const { tensor, bytes } = decodeWeight(spec, buf, offset, file);
      weights.set(spec.name, tensor);
      offset += bytes;
    }
    if (offset !== buf.length) {
      throw new ObscuraError("INVALID_ARGUMENT", `${file}: weight shards hold ${buf.length} bytes but the manifest describes ${offset}`);
    }
  }
  return weights;
}

const elementCount = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

function decodeWeight(spec: WeightSpec, buf: Buffer, offset: number, file: string): { tensor: ConstTensor; bytes: number } {
  const n = elementCount(spec.shape);
  const q = spec.quantization;
  const copy = (bytes: number) => {
    if (offset + bytes > buf.length) throw new ObscuraError("INVALID_ARGUMENT", `${file}: weight "${spec.name}" runs past the end of its shards`);
    // A fresh, aligned ArrayBuffer: typed-array views need element alignment.
    return buf.buffer.slice(buf.byteOffset + offset, buf.byteOffset + offset + bytes);
  };
  if (q) {
    if (q.dtype === "float16") {
      if (spec.dtype !== "float32") throw new ObscuraError("INVALID_ARGUMENT", `${file}: weight "${spec.name}" is float16-quantised but has dtype ${spec.dtype}`);
      const half = new Uint16Array(copy(n * 2));
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = halfToFloat(half[i]);
      return { tensor: { dtype: "float32", shape: spec.shape, data: out }, bytes: n * 2 };
    }
    if (q.dtype === "uint8" || q.dtype === "uint16") {
      if (q.scale === undefined || q.min === undefined) throw new ObscuraError("INVALID_ARGUMENT", `${file}: quantised weight "${spec.name}" lacks scale/min`);
      const size = q.dtype === "uint8" ? 1 : 2;
      const raw = copy(n * size);
      const src = size === 1 ? new Uint8Array(raw) : new Uint16Array(raw);
      if (spec.dtype === "float32") {
        const out = new Float32Array(n);
        for (let i = 0; i < n; i++) out[i] = src[i] * q.scale + q.min;
        return { tensor: { dtype: "float32", shape: spec.shape, data: out }, bytes: n * size };
      }
      if (spec.dtype === "int32") {
        const out = new Int32Array(n);
        for (let i = 0; i < n; i++) out[i] = Math.round(src[i] * q.scale + q.min);
        return { tensor: { dtype: "int32", shape: spec.shape, data: out }, bytes: n * size };
      }
    }
    throw new ObscuraError("UNIMPLEMENTED", `${file}: weight "${spec.name}" uses quantisation ${q.dtype} for ${spec.dtype}, which is not supported`);
  }
  switch (spec.dtype) {
    case "float32":
      return { tensor: { dtype: "float32", shape: spec.shape, data: new Float32Array(copy(n * 4)) }, bytes: n * 4 };
    case "int32":
      return { tensor: { dtype: "int32", shape: spec.shape, data: new Int32Array(copy(n * 4)) }, bytes: n * 4 };
    case "bool":
      return { tensor: { dtype: "bool", shape: spec.shape, data: new Uint8Array(copy(n)) }, bytes: n };
    default:
      throw new ObscuraError("UNIMPLEMENTED", `${file}: weight "${spec.name}" has dtype ${spec.dtype}, which the converter does not support`);
  }
}

/** IEEE 754 half precision to float (exact; subnormals and inf/NaN included). */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** TF DataType enum names -> the converter's dtypes, mirroring TF.js (doubles become float32, all ints int32). */
export function tfDtype(t: string | undefined, where: string): DType {
  switch (t) {
    case "DT_FLOAT":
    case "DT_DOUBLE":
    case "DT_HALF":
    case "DT_BFLOAT16":
      return "float32";
    case "DT_INT32":
    case "DT_INT64":
    case "DT_INT16":
    case "DT_INT8":
    case "DT_UINT8":
    case "DT_UINT16":
      return "int32";
    case "DT_BOOL":
      return "bool";
    default:
      throw new ObscuraError("UNIMPLEMENTED", `${where}: TF dtype ${t ?? "(none)"} is not supported`);
  }
}

/** Typed access to one node's attributes. */
export class Attrs {
  constructor(private readonly node: TfNode) {}

  private get(name: string): TfAttr | undefined {
    return this.node.attr?.[name];
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  str(name: string, fallback?: string): string {
    const a = this.get(name);
    if (a?.s !== undefined) return Buffer.from(a.s, "base64").toString("utf8");
    if (fallback !== undefined) return fallback;
    throw this.missing(name);
  }

  int(name: string, fallback?: number): number {
    const a = this.get(name);
    if (a?.i !== undefined) return Number(a.i);
    if (fallback !== undefined) return fallback;
    throw this.missing(name);
  }

  float(name: string, fallback?: number): number {
    const a = this.get(name);
    if (a?.f !== undefined) return Number(a.f);
    if (fallback !== undefined) return fallback;
    throw this.missing(name);
  }

  bool(name: string, fallback = false): boolean {
    const a = this.get(name);
    return a?.b ?? fallback;
  }

  ints(name: string, fallback?: number[]): number[] {
    const a = this.get(name);
    if (a?.list) return (a.list.i ?? []).map(Number);
    if (fallback !== undefined) return fallback;
    throw this.missing(name);
  }

  strs(name: string): string[] {
    return (this.get(name)?.list?.s ?? []).map((s) => Buffer.from(s, "base64").toString("utf8"));
  }

  dtype(name: string, fallback?: DType): DType {
    const a = this.get(name);
    if (a?.type !== undefined) return tfDtype(a.type, `node "${this.node.name}" attr ${name}`);
    if (fallback !== undefined) return fallback;
    throw this.missing(name);
  }

  shape(name: string): number[] | null {
    const s = this.get(name)?.shape;
    if (!s || s.unknownRank) return null;
    return (s.dim ?? []).map((d) => Number(d.size ?? -1));
  }

  private missing(name: string): ObscuraError {
    return new ObscuraError("INVALID_ARGUMENT", `node "${this.node.name}" (${this.node.op}) lacks attribute ${name}`);
  }
}

/** "name:1" -> ["name", 1]; control inputs ("^name") are reported by the caller. */
export function parseInput(ref: string): { node: string; index: number; control: boolean } {
  const control = ref.startsWith("^");
  const s = control ? ref.slice(1) : ref;
  const m = /^(.*):(\d+)$/.exec(s);
  return m ? { node: m[1], index: Number(m[2]), control } : { node: s, index: 0, control };
}
