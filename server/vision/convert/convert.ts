/**
 * The conversion driver: walks the TF graph from the requested output tensors back to the
 * placeholders (so a graph can be cut before post-processing the converter does not support),
 * translates each node in dependency order and writes the ONNX model.
 */
import { ObscuraError } from "@/lib/errors";
import { OpContext, type Translator } from "./context";
import { type Fusion, findFusions } from "./fuse";
import { OnnxGraph, OPSET, type Value } from "./onnx-graph";
import { TRANSLATORS, supportedOps } from "./ops";
import { type DType, type GraphModel, type TfNode, Attrs, parseInput, readGraphModel } from "./tfjs-model";

/** Bump when translations change: converted-model caches key on it. */
export const CONVERTER_VERSION = 1;

export interface ConvertOptions {
  /**
   * Tensors to export: TF tensor name ("node" or "node:k") -> ONNX output name. A list keeps the
   * TF names. Default: the model signature's outputs, else every node nothing else consumes.
   */
  outputs?: Record<string, string> | string[];
  /** Placeholder overrides: a fixed shape (replacing -1 dims) and/or another input dtype. */
  inputs?: Record<string, { shape?: number[]; dtype?: DType }>;
  /** Stored as the ONNX model's doc string. */
  doc?: string;
}

export interface TensorInfo {
  name: string;
  dtype: DType;
  shape: number[];
}

export interface ConvertResult {
  onnx: Uint8Array;
  inputs: TensorInfo[];
  outputs: TensorInfo[];
  /** TF ops translated (only those on the path to the outputs), with counts. */
  tfOps: Record<string, number>;
  onnxOps: Record<string, number>;
}

export async function convertGraphModelFile(jsonFile: string, opts: ConvertOptions = {}): Promise<ConvertResult> {
  return convertGraphModel(await readGraphModel(jsonFile), opts);
}

function defaultOutputs(model: GraphModel): string[] {
  const sig = model.json.signature?.outputs;
  if (sig && Object.keys(sig).length) return Object.values(sig).map((o) => o.name.replace(/:0$/, ""));
  const consumed = new Set<string>();
  for (const n of model.nodes.values()) for (const i of n.input ?? []) consumed.add(parseInput(i).node);
  return [...model.nodes.values()].filter((n) => !consumed.has(n.name) && n.op !== "Const" && n.op !== "NoOp").map((n) => n.name);
}

/** Nodes needed for `targets`, inputs before consumers (iterative: graphs can be deep). */
function schedule(model: GraphModel, targets: string[], inputsOf: (n: TfNode) => string[]): TfNode[] {
  const order: TfNode[] = [];
  const state = new Map<string, "open" | "done">();
  for (const t of targets) {
    const stack: Array<{ node: TfNode; next: number }> = [];
    const push = (name: string, from: string) => {
      const node = model.nodes.get(name);
      if (!node) throw new ObscuraError("INVALID_ARGUMENT", `${model.file}: tensor "${name}"${from ? ` (input of "${from}")` : ""} does not exist in the graph`);
      if (state.get(name) === "done") return;
      if (state.get(name) === "open") throw new ObscuraError("UNIMPLEMENTED", `${model.file}: the graph has a cycle through "${name}" (TF1 control flow), which the converter does not support; export tensors computed before it`);
      state.set(name, "open");
      stack.push({ node, next: 0 });
    };
    push(t, "");
    while (stack.length) {
      const top = stack.at(-1)!;
      const inputs = inputsOf(top.node).map(parseInput).filter((i) => !i.control);
      if (top.next < inputs.length) {
        const dep = inputs[top.next++].node;
        if (state.get(dep) !== "done") push(dep, top.node.name);
      } else {
        stack.pop();
        state.set(top.node.name, "done");
        order.push(top.node);
      }
    }
  }
  return order;
}

export function convertGraphModel(model: GraphModel, opts: ConvertOptions = {}): ConvertResult {
  const outputMap: Array<[string, string]> = Array.isArray(opts.outputs)
    ? opts.outputs.map((o) => [o, o])
    : opts.outputs
      ? Object.entries(opts.outputs)
      : defaultOutputs(model).map((o) => [o, o]);
  const g = new OnnxGraph();
  const onnxNames = new Set(outputMap.map(([, o]) => o));
  if (onnxNames.size !== outputMap.length) throw new ObscuraError("INVALID_ARGUMENT", "ConvertOptions.outputs: two outputs have the same ONNX name");
  for (const o of onnxNames) g.reserve(o);
  for (const name of Object.keys(opts.inputs ?? {})) {
    if (model.nodes.get(name)?.op !== "Placeholder") throw new ObscuraError("INVALID_ARGUMENT", `ConvertOptions.inputs: "${name}" is not an input (Placeholder) of ${model.file}`);
  }
  const values = new Map<string, Value[]>();
  const tfOps: Record<string, number> = {};
  const inputs: TensorInfo[] = [];
  const fusions = findFusions(model);
  const inputsOf = (n: TfNode) => {
    const f = fusions.get(n.name);
    return f ? [f.input] : (n.input ?? []);
  };
  const nodes = schedule(
    model,
    outputMap.map(([t]) => parseInput(t).node),
    inputsOf,
  );
  for (const node of nodes) {
    const fusion = fusions.get(node.name);
    const op = fusion ? `${fusion.op} (fused)` : node.op;
    tfOps[op] = (tfOps[op] ?? 0) + 1;
    values.set(node.name, translate(model, g, node, fusion, inputsOf(node), values, opts, inputs));
  }
  const outputs: TensorInfo[] = [];
  for (const [tfName, onnxName] of outputMap) {
    const ref = parseInput(tfName);
    const v = values.get(ref.node)?.[ref.index];
    if (!v) throw new ObscuraError("INVALID_ARGUMENT", `${model.file}: node "${ref.node}" has no output ${ref.index}`);
    g.addOutput(onnxName, v);
    outputs.push({ name: onnxName, dtype: v.dtype, shape: v.shape });
  }
  const onnx = g.encode({
    producer: "obscura-tfjs2onnx",
    doc: opts.doc ?? `converted from ${model.file}`,
    props: { converter_version: String(CONVERTER_VERSION), opset: String(OPSET), source: model.file.split("/").slice(-2).join("/") },
  });
  return { onnx, inputs, outputs, tfOps, onnxOps: Object.fromEntries(g.opCounts) };
}

function translate(
  model: GraphModel,
  g: OnnxGraph,
  node: TfNode,
  fusion: Fusion | undefined,
  inputRefs: string[],
  values: Map<string, Value[]>,
  opts: ConvertOptions,
  inputs: TensorInfo[],
): Value[] {
  if (node.op === "Const") {
    const w = model.weights.get(node.name);
    if (!w) throw new ObscuraError("INVALID_ARGUMENT", `${model.file}: constant "${node.name}" has no entry in weightsManifest`);
    return [g.constant(w.dtype, w.shape, w.data)];
  }
  if (node.op === "Placeholder") {
    const attrs = new Attrs(node);
    const over = opts.inputs?.[node.name];
    const declared = attrs.shape("shape");
    const shape = over?.shape ?? declared;
    if (!shape) throw new ObscuraError("INVALID_ARGUMENT", `${model.file}: input "${node.name}" has unknown rank; give its shape in ConvertOptions.inputs`);
    if (over?.shape && declared && (declared.length !== over.shape.length || declared.some((d, k) => d >= 0 && d !== over.shape![k]))) {
      throw new ObscuraError("INVALID_ARGUMENT", `input "${node.name}" is [${declared}] in the model; [${over.shape}] does not fit it`);
    }
    const dtype = over?.dtype ?? attrs.dtype("dtype");
    inputs.push({ name: node.name, dtype, shape });
    return [g.addInput(node.name, dtype, shape)];
  }
  const translator = fusion ? fused(fusion) : TRANSLATORS[node.op];
  if (!translator) {
    throw new ObscuraError(
      "UNIMPLEMENTED",
      `TF op "${node.op}" (node "${node.name}") is not supported by the TF.js->ONNX converter. Export tensors computed before it (ConvertOptions.outputs) or add a translator. Supported ops: ${supportedOps().join(", ")}`,
    );
  }
  const ins = inputRefs
    .map(parseInput)
    .filter((i) => !i.control)
    .map((i) => {
      const v = values.get(i.node)?.[i.index];
      if (!v) throw new ObscuraError("INVALID_ARGUMENT", `${model.file}: node "${node.name}" reads output ${i.index} of "${i.node}", which does not exist`);
      return v;
    });
  return translator(new OpContext(g, node), ins);
}

function fused(f: Fusion): Translator {
  return (ctx, [x]) => {
    const out = { dtype: x.dtype, shape: x.shape };
    const y = ctx.elementwise(f.op, [x], {}, out, `/${f.op}`);
    return [f.scale === 1 ? y : ctx.elementwise("Mul", [y, ctx.g.scalar("float32", f.scale)], {}, out)];
  };
}
