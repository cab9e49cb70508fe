/**
 * TF.js graph model -> ONNX converter (server/vision/convert) and the converted-model cache
 * (server/vision/models.ts), checked against TF.js itself: the same input goes through
 * @tensorflow/tfjs-converter on the tfjs-backend-cpu reference backend and through onnxruntime-node
 * on the converted model, and every output must agree.
 *
 * Tolerance: max |onnx - tfjs| <= 1e-4 x max(1, range of the TF.js output). Measured on this
 * machine (sample1.jpg: 3 faces, 3 people; max abs diff, output range in brackets), largest
 * relative difference 6.5e-6, i.e. ~15x inside the tolerance:
 *   blazeface-back 256x256   logits_stride16 5.0e-4 [281], regressors_stride16 9.6e-5 [93],
 *                            logits_stride32 2.3e-5 [24], regressors_stride32 4.5e-5 [170]
 *   centernet 512x512        heatmap 8.2e-7 [0.67], box_distances 2.0e-3 [303],
 *                            detections 8.7e-4 [518] (same top-100 order and classes)
 *   faceboxes 500x340        boxes 4.5e-7 [1], scores 1.2e-6 [0.92]
 *   movenet-multipose 256x192  poses 1.2e-6 [1]
 *   synthetic op mix (uint8/uint16-quantised weights, slicing masks, resize modes, integer ops,
 *   transposed convolutions, DepthToSpace, DivNoNan)
 *                            <= 5.5e-5 [18] (DivNoNan near zero divisors), others <= 3.8e-6
 * The TF.js CPU backend is slow (centernet alone takes 15-40 s here): it sets this file's run time
 * (30-45 s on 2 shared cores).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as tf from "@tensorflow/tfjs-core";
import "@tensorflow/tfjs-backend-cpu";
import { type GraphModel as TfjsGraphModel, loadGraphModel } from "@tensorflow/tfjs-converter";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { isObscuraError } from "@/lib/errors";
import { resetConfig } from "@/server/config";
import { log } from "@/server/log";
import { convertGraphModelFile, supportedOps } from "@/server/vision/convert";
import { MODEL_SPECS, type ModelName, ensureModel, modelSourceFile } from "@/server/vision/models";
import { ort, session } from "@/server/vision/onnx";

const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
const TOLERANCE = 1e-4;

let dataDir = "";
const savedDataDir = process.env.OBSCURA_DATA_DIR;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "obscura-convert-"));
  process.env.OBSCURA_DATA_DIR = dataDir;
  resetConfig();
  tf.env().set("PROD", true);
  await tf.setBackend("cpu");
  await tf.ready();
});

afterAll(() => {
  if (savedDataDir === undefined) delete process.env.OBSCURA_DATA_DIR;
  else process.env.OBSCURA_DATA_DIR = savedDataDir;
  resetConfig();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A TF.js graph model loaded from model.json + shards (tfjs-node's file:// handler is not installed). */
async function loadTfjs(jsonFile: string): Promise<TfjsGraphModel> {
  const json = JSON.parse(fs.readFileSync(jsonFile, "utf8"));
  const shards = json.weightsManifest.flatMap((g: { paths: string[] }) => g.paths.map((p) => fs.readFileSync(path.join(path.dirname(jsonFile), p))));
  const all = Buffer.concat(shards);
  return loadGraphModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest.flatMap((g: { weights: unknown[] }) => g.weights),
      weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.length),
    }),
  );
}

/** The sample photo stretched to width x height, as NHWC RGB floats through `f`. */
async function photo(width: number, height: number, f: (v: number) => number): Promise<Float32Array> {
  const data = await sharp(SAMPLE).resize(width, height, { fit: "fill" }).removeAlpha().raw().toBuffer();
  return Float32Array.from(data, f);
}

interface Diff {
  name: string;
  maxAbs: number;
  range: number;
}

/** Runs both, checks shapes and values, returns the measured differences. */
async function compare(tfModel: TfjsGraphModel, tfInput: tf.Tensor, tfNames: string[], onnxFile: string, feeds: Record<string, ort.Tensor>, onnxNames: string[]): Promise<Diff[]> {
  const tfOut = (await tfModel.executeAsync(tfInput, tfNames)) as tf.Tensor | tf.Tensor[];
  const expected = Array.isArray(tfOut) ? tfOut : [tfOut];
  const s = await session(onnxFile);
  const got = await s.run(feeds);
  const diffs: Diff[] = [];
  for (const [k, name] of onnxNames.entries()) {
    const want = expected[k];
    const have = got[name];
    expect(have.dims, name).toEqual(want.shape);
    const a = want.dataSync();
    const b = have.data as Float32Array;
    let maxAbs = 0;
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < a.length; i++) {
      maxAbs = Math.max(maxAbs, Math.abs(a[i] - Number(b[i])));
      lo = Math.min(lo, a[i]);
      hi = Math.max(hi, a[i]);
    }
    diffs.push({ name, maxAbs, range: hi - lo });
  }
  tf.dispose([tfInput, ...expected]);
  for (const d of diffs) expect(d.maxAbs, `${d.name}: max |onnx - tfjs| ${d.maxAbs} over a range of ${d.range} (all: ${JSON.stringify(diffs)})`).toBeLessThanOrEqual(TOLERANCE * Math.max(1, d.range));
  return diffs;
}

const report = (model: string, diffs: Diff[]) =>
  console.log(`[parity] ${model}: ${diffs.map((d) => `${d.name} max diff ${d.maxAbs.toExponential(2)} (range ${d.range.toPrecision(3)})`).join("; ")}`);

interface Case {
  name: ModelName;
  width: number;
  height: number;
  /** 0..255 -> model input. */
  normalise: (v: number) => number;
  /** The TF model takes int32 (uint8/int32 placeholders); the ONNX one takes float32. */
  tfInt?: boolean;
  /** 1: one grey channel (0.2989 R + 0.587 G + 0.114 B) before `normalise`. */
  channels?: 1 | 3;
}

const CASES: Case[] = [
  { name: "blazeface-back", width: 256, height: 256, normalise: (v) => v / 127.5 - 1 },
  { name: "centernet", width: 512, height: 512, normalise: (v) => v },
  // Not a multiple of 32: exercises the graph's own padding and the dynamic shapes.
  { name: "faceboxes", width: 500, height: 340, normalise: (v) => v, tfInt: true },
  { name: "movenet-multipose", width: 256, height: 192, normalise: (v) => v, tfInt: true },
  { name: "faceres", width: 224, height: 224, normalise: (v) => v },
  { name: "emotion", width: 64, height: 64, normalise: (v) => (v / 255 - 0.5) * 2, channels: 1 },
];

/** RGB floats (0..255) -> one grey channel. */
function grey(rgb: Float32Array): Float32Array {
  const out = new Float32Array(rgb.length / 3);
  for (let i = 0; i < out.length; i++) out[i] = 0.2989 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!;
  return out;
}

describe("TF.js graph models converted to ONNX match TF.js (cpu backend)", () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const spec = MODEL_SPECS[c.name];
      const file = await ensureModel(c.name);
      expect(path.dirname(file)).toBe(path.join(dataDir, "models"));
      expect(path.basename(file)).toMatch(new RegExp(`^${c.name}-[0-9a-f]{12}\\.onnx$`));
      const x = c.channels === 1 ? grey(await photo(c.width, c.height, (v) => v)).map(c.normalise) : await photo(c.width, c.height, c.normalise);
      const shape = [1, c.height, c.width, c.channels ?? 3];
      const tfInput = c.tfInt ? tf.tensor(Int32Array.from(x), shape, "int32") : tf.tensor(x, shape);
      const onnxNames = spec.outputs.map((o) => o.name);
      expect(Object.values(spec.convert.outputs as Record<string, string>).sort()).toEqual([...onnxNames].sort());
      const tfModel = await loadTfjs(modelSourceFile(c.name));
      // compare() pairs outputs by position: order the TF names like spec.outputs.
      const byOnnx = Object.fromEntries(Object.entries(spec.convert.outputs as Record<string, string>).map(([t, o]) => [o, t]));
      const diffs = await compare(tfModel, tfInput, onnxNames.map((o) => byOnnx[o]), file, { [spec.input.name]: new ort.Tensor("float32", x, shape) }, onnxNames);
      report(`${c.name} ${c.width}x${c.height}`, diffs);
      tfModel.dispose();
    });
  }

  it("decodes as documented: blazeface finds the three faces of the sample", async () => {
    const s = await session(await ensureModel("blazeface-back"));
    const out = await s.run({ input: new ort.Tensor("float32", await photo(256, 256, (v) => v / 127.5 - 1), [1, 256, 256, 3]) });
    const anchors: Array<[number, number]> = [];
    for (const [stride, perCell] of [
      [16, 2],
      [32, 6],
    ])
      for (let row = 0; row < 256 / stride; row++) for (let col = 0; col < 256 / stride; col++) for (let k = 0; k < perCell; k++) anchors.push([(col + 0.5) * stride, (row + 0.5) * stride]);
    const logits = [...(out.logits_stride16.data as Float32Array), ...(out.logits_stride32.data as Float32Array)];
    const reg = [...(out.regressors_stride16.data as Float32Array), ...(out.regressors_stride32.data as Float32Array)];
    const centres = logits
      .map((l, i) => ({ i, score: 1 / (1 + Math.exp(-l)) }))
      .filter((d) => d.score > 0.6)
      .map(({ i }) => [(anchors[i][0] + reg[i * 16]) / 256, (anchors[i][1] + reg[i * 16 + 1]) / 256]);
    // Faces of sample1.jpg (fractions of width, height): left ~(0.27, 0.39), middle ~(0.49, 0.43), right ~(0.82, 0.26).
    for (const [fx, fy] of [
      [0.27, 0.39],
      [0.49, 0.43],
      [0.82, 0.26],
    ]) {
      expect(centres.some(([x, y]) => Math.abs(x - fx) < 0.04 && Math.abs(y - fy) < 0.04)).toBe(true);
    }
  });

  it("converts once per data dir: concurrent callers share it, later calls reuse the file", async () => {
    const other = fs.mkdtempSync(path.join(dataDir, "cache-"));
    process.env.OBSCURA_DATA_DIR = other;
    resetConfig();
    const info = vi.spyOn(log, "info");
    const conversions = () => info.mock.calls.filter(([msg]) => msg === "converted model to ONNX");
    try {
      const [a, b] = await Promise.all([ensureModel("blazeface-back"), ensureModel("blazeface-back")]);
      expect(a).toBe(b);
      expect(conversions()).toHaveLength(1);
      expect(conversions()[0][1]).toMatchObject({ model: "blazeface-back", file: a });
      expect(fs.readdirSync(path.join(other, "models"))).toEqual([path.basename(a)]); // no temp files left
      const mtime = fs.statSync(a).mtimeMs;
      expect(await ensureModel("blazeface-back")).toBe(a);
      expect(fs.statSync(a).mtimeMs).toBe(mtime);
      expect(conversions()).toHaveLength(1);
      fs.rmSync(a);
      expect(await ensureModel("blazeface-back")).toBe(a); // a deleted file is made again
      expect(conversions()).toHaveLength(2);
    } finally {
      info.mockRestore();
      process.env.OBSCURA_DATA_DIR = dataDir;
      resetConfig();
    }
  });
});

// ---- a synthetic graph model: quantised weights and ops the four models do not all use ----

const b64 = (s: string) => Buffer.from(s).toString("base64");
const A = {
  s: (v: string) => ({ s: b64(v) }),
  i: (v: number) => ({ i: String(v) }),
  f: (v: number) => ({ f: v }),
  b: (v: boolean) => ({ b: v }),
  ints: (v: number[]) => ({ list: { i: v.map(String) } }),
  type: (t: string) => ({ type: t }),
};
type TfJsonNode = { name: string; op: string; input?: string[]; attr?: Record<string, unknown> };

/** Writes model.json + .bin of a small graph; returns the json path. */
function writeSyntheticModel(dir: string): string {
  const nodes: TfJsonNode[] = [];
  const weights: Array<{ name: string; shape: number[]; dtype: string; quantization?: object }> = [];
  const chunks: Buffer[] = [];
  const n = (name: string, op: string, input: string[] = [], attr: Record<string, unknown> = {}) => nodes.push({ name, op, input, attr });
  const constant = (name: string, shape: number[], dtype: "float32" | "int32", values: number[], quant?: "uint8" | "uint16") => {
    n(name, "Const", [], { dtype: A.type(dtype === "float32" ? "DT_FLOAT" : "DT_INT32"), value: { tensor: { dtype: dtype === "float32" ? "DT_FLOAT" : "DT_INT32" } } });
    if (quant) {
      const min = Math.min(...values);
      const max = Math.max(...values);
      const levels = quant === "uint8" ? 255 : 65535;
      const scale = (max - min) / levels || 1;
      const q = values.map((v) => Math.round((v - min) / scale));
      weights.push({ name, shape, dtype, quantization: { dtype: quant, scale, min } });
      chunks.push(Buffer.from(quant === "uint8" ? Uint8Array.from(q).buffer : Uint16Array.from(q).buffer));
    } else {
      weights.push({ name, shape, dtype });
      chunks.push(Buffer.from((dtype === "float32" ? Float32Array.from(values) : Int32Array.from(values)).buffer));
    }
  };
  const seq = (k: number, f: (i: number) => number) => Array.from({ length: k }, (_, i) => f(i));
  n("x", "Placeholder", [], { dtype: A.type("DT_FLOAT"), shape: { shape: { dim: [1, 8, 8, 4].map((d) => ({ size: String(d) })) } } });
  constant("w1", [3, 3, 4, 6], "float32", seq(216, (i) => Math.sin(i * 0.37) * 0.5), "uint8");
  constant("b1", [6], "float32", seq(6, (i) => i * 0.1 - 0.2), "uint16");
  n("conv", "Conv2D", ["x", "w1"], { strides: A.ints([1, 2, 2, 1]), padding: A.s("SAME"), data_format: A.s("NHWC"), dilations: A.ints([1, 1, 1, 1]) });
  n("bias", "BiasAdd", ["conv", "b1"]);
  n("relu6", "Relu6", ["bias"]);
  n("avg", "AvgPool", ["relu6"], { ksize: A.ints([1, 3, 3, 1]), strides: A.ints([1, 1, 1, 1]), padding: A.s("SAME"), data_format: A.s("NHWC") });
  constant("size75", [2], "int32", [7, 5]);
  n("resize_hp", "ResizeBilinear", ["avg", "size75"], { align_corners: A.b(false), half_pixel_centers: A.b(true) });
  constant("size88", [2], "int32", [8, 8]);
  n("resize_ac", "ResizeBilinear", ["avg", "size88"], { align_corners: A.b(true), half_pixel_centers: A.b(false) });
  n("resize_nn", "ResizeNearestNeighbor", ["avg", "size75"], { align_corners: A.b(false), half_pixel_centers: A.b(false) });
  // x[:, ::-2, 1:5, :] then [:, 2] then [:, :, newaxis] (masks, negative stride, shrink, new axis).
  // TF.js mis-slices some mask mixes (shrinking the last axis, new axes before a shrink): those
  // are checked against hand-computed TF results in the next test instead.
  constant("ss_b", [4], "int32", [0, 0, 1, 0]);
  constant("ss_e", [4], "int32", [0, 0, 5, 0]);
  constant("ss_s", [4], "int32", [1, -2, 1, 1]);
  n("sliced", "StridedSlice", ["resize_ac", "ss_b", "ss_e", "ss_s"], { begin_mask: A.i(11), end_mask: A.i(11) });
  constant("pick_b", [2], "int32", [0, 2]);
  constant("pick_e", [2], "int32", [0, 3]);
  constant("pick_s", [2], "int32", [1, 1]);
  n("picked", "StridedSlice", ["sliced", "pick_b", "pick_e", "pick_s"], { begin_mask: A.i(1), end_mask: A.i(1), shrink_axis_mask: A.i(2) });
  constant("na_b", [3], "int32", [0, 0, 0]);
  constant("na_s", [3], "int32", [1, 1, 1]);
  n("expanded", "StridedSlice", ["picked", "na_b", "na_b", "na_s"], { begin_mask: A.i(3), end_mask: A.i(3), new_axis_mask: A.i(4) });
  constant("perm", [4], "int32", [0, 3, 1, 2]);
  n("tr", "Transpose", ["resize_hp", "perm"]);
  constant("axes23", [2], "int32", [2, 3]);
  n("sum", "Sum", ["tr", "axes23"], { keep_dims: A.b(false) });
  n("mean", "Mean", ["resize_nn", "axes23"], { keep_dims: A.b(true) });
  constant("one", [], "int32", [1]);
  n("argmax", "ArgMax", ["sum", "one"], { output_type: A.type("DT_INT32") });
  constant("ten", [], "float32", [10]);
  n("x10", "Mul", ["x", "ten"]);
  n("xi", "Cast", ["x10"], { SrcT: A.type("DT_FLOAT"), DstT: A.type("DT_INT32") });
  constant("m3", [], "int32", [-3]);
  n("fdiv", "FloorDiv", ["xi", "m3"]);
  n("fmod", "FloorMod", ["xi", "m3"]);
  n("two", "AddV2", ["sum", "sum"]);
  n("pack", "Pack", ["sum", "two"], { axis: A.i(1), N: A.i(2) });
  n("unpack", "Unpack", ["pack"], { axis: A.i(1), num: A.i(2) });
  constant("zero", [], "float32", [0.5]);
  n("gt", "Greater", ["sum", "zero"]);
  n("neg", "Neg", ["sum"]);
  n("select", "SelectV2", ["gt", "sum", "neg"]);
  constant("pads", [4, 2], "int32", [0, 0, 1, 2, 2, 1, 0, 0]);
  n("mirror", "MirrorPad", ["relu6", "pads"], { mode: A.s("REFLECT") });
  constant("mult", [4], "int32", [1, 1, 2, 1]);
  n("tile", "Tile", ["mirror", "mult"]);
  constant("idx", [3], "int32", [2, 0, 1]);
  constant("axis3", [], "int32", [3]);
  n("gather", "GatherV2", ["tile", "idx", "axis3"], { batch_dims: A.i(0) });
  n("squeeze", "Squeeze", ["mean"], { squeeze_dims: A.ints([2, 3]) });
  // Transposed convolutions (SAME to an odd size, VALID) and DepthToSpace.
  constant("wt", [3, 3, 3, 6], "float32", seq(162, (i) => Math.cos(i * 0.21) * 0.4));
  for (const [name, pad, size] of [
    ["deconv_same", "SAME", [1, 7, 7, 3]],
    ["deconv_valid", "VALID", [1, 9, 9, 3]],
  ] as const) {
    constant(`${name}/size`, [4], "int32", [...size]);
    n(name, "Conv2DBackpropInput", [`${name}/size`, "wt", "relu6"], { strides: A.ints([1, 2, 2, 1]), padding: A.s(pad), data_format: A.s("NHWC"), dilations: A.ints([1, 1, 1, 1]) });
  }
  n("d2s", "DepthToSpace", ["x"], { block_size: A.i(2), data_format: A.s("NHWC") });
  n("dnn", "DivNoNan", ["avg", "relu6"]); // relu6 has zeros
  n("abs", "Abs", ["select"]);
  constant("onef", [], "float32", [1]);
  n("abs1", "AddV2", ["abs", "onef"]);
  n("rsqrt", "Rsqrt", ["abs1"]);
  const outputs = ["resize_ac", "sliced", "expanded", "sum", "mean", "argmax", "fdiv", "fmod", "unpack:1", "select", "gather", "squeeze", "rsqrt", "resize_nn", "deconv_same", "deconv_valid", "d2s", "dnn"];
  const file = path.join(dir, "model.json");
  fs.writeFileSync(path.join(dir, "weights.bin"), Buffer.concat(chunks));
  fs.writeFileSync(file, JSON.stringify({ format: "graph-model", modelTopology: { node: nodes, versions: { producer: 1 } }, weightsManifest: [{ paths: ["weights.bin"], weights }], outputs }));
  return file;
}

describe("converter details", () => {
  it("translates quantised weights, slicing masks, resize modes and integer ops like TF.js", async () => {
    const dir = fs.mkdtempSync(path.join(dataDir, "synthetic-"));
    const file = writeSyntheticModel(dir);
    const outputs = JSON.parse(fs.readFileSync(file, "utf8")).outputs as string[];
    const r = await convertGraphModelFile(file, { outputs: Object.fromEntries(outputs.map((o) => [o, o.replace(":", "_")])) });
    const onnxFile = path.join(dir, "model.onnx");
    fs.writeFileSync(onnxFile, r.onnx);
    const x = Float32Array.from({ length: 256 }, (_, i) => Math.cos(i * 0.7) * 0.9);
    const tfModel = await loadTfjs(file);
    const diffs = await compare(tfModel, tf.tensor(x, [1, 8, 8, 4]), outputs, onnxFile, { x: new ort.Tensor("float32", x, [1, 8, 8, 4]) }, outputs.map((o) => o.replace(":", "_")));
    report("synthetic", diffs);
    expect(r.outputs.find((o) => o.name === "sliced")?.shape).toEqual([1, 4, 4, 6]);
    expect(r.outputs.find((o) => o.name === "expanded")?.shape).toEqual([1, 4, 1, 6]);
  });

  it("slices with TF's StridedSlice semantics where TF.js gets them wrong", async () => {
    const dir = fs.mkdtempSync(path.join(dataDir, "slices-"));
    const file = path.join(dir, "model.json");
    const slices: Array<[string, number[], number[], number[], Record<string, number>]> = [
      // x[:, 1:-1:2, :, 2] -> [1,3,8]
      ["shrink_last", [0, 1, 0, 2], [0, -1, 0, 3], [1, 2, 1, 1], { begin_mask: 5, end_mask: 5, shrink_axis_mask: 8 }],
      // x[:, 1:-1:2, ..., newaxis, 2] -> [1,3,8,1]
      ["ellipsis", [0, 1, 0, 0, 2], [0, -1, 0, 0, 3], [1, 2, 1, 1, 1], { begin_mask: 1, end_mask: 1, ellipsis_mask: 4, new_axis_mask: 8, shrink_axis_mask: 16 }],
      // x[..., -1] -> [1,8,8]
      ["last", [0, -1], [0, 0], [1, 1], { ellipsis_mask: 1, shrink_axis_mask: 2 }],
    ];
    const weights: Array<{ name: string; shape: number[]; dtype: string }> = [];
    const data: number[] = [];
    const nodes: TfJsonNode[] = [{ name: "x", op: "Placeholder", attr: { dtype: A.type("DT_FLOAT"), shape: { shape: { dim: [1, 8, 8, 6].map((d) => ({ size: String(d) })) } } } }];
    for (const [name, b, e, st, masks] of slices) {
      for (const [suffix, v] of [["b", b], ["e", e], ["s", st]] as const) {
        nodes.push({ name: `${name}/${suffix}`, op: "Const", attr: { dtype: A.type("DT_INT32") } });
        weights.push({ name: `${name}/${suffix}`, shape: [v.length], dtype: "int32" });
        data.push(...v);
      }
      nodes.push({ name, op: "StridedSlice", input: ["x", `${name}/b`, `${name}/e`, `${name}/s`], attr: Object.fromEntries(Object.entries(masks).map(([k, v]) => [k, A.i(v)])) });
    }
    fs.writeFileSync(path.join(dir, "w.bin"), Buffer.from(Int32Array.from(data).buffer));
    fs.writeFileSync(file, JSON.stringify({ modelTopology: { node: nodes }, weightsManifest: [{ paths: ["w.bin"], weights }] }));
    const r = await convertGraphModelFile(file, { outputs: slices.map(([name]) => name) });
    expect(r.outputs.map((o) => o.shape)).toEqual([
      [1, 3, 8],
      [1, 3, 8, 1],
      [1, 8, 8],
    ]);
    const s = await ort.InferenceSession.create(r.onnx);
    const x = Float32Array.from({ length: 384 }, (_, i) => i); // x[0, h, w, c] = (h * 8 + w) * 6 + c
    const out = await s.run({ x: new ort.Tensor("float32", x, [1, 8, 8, 6]) });
    const first = (name: string) => Array.from(out[name].data as Float32Array).slice(0, 3);
    expect(first("shrink_last")).toEqual([50, 56, 62]); // x[0,1,0,2], x[0,1,1,2], x[0,1,2,2]
    expect(first("ellipsis")).toEqual([50, 56, 62]);
    expect(first("last")).toEqual([5, 11, 17]);
    expect(Array.from(out.shrink_last.data as Float32Array)[8]).toBe(146); // x[0,3,0,2]
  });

  it("names an unsupported op and its node", async () => {
    const dir = fs.mkdtempSync(path.join(dataDir, "unknown-op-"));
    const file = path.join(dir, "model.json");
    const nodes: TfJsonNode[] = [
      { name: "image", op: "Placeholder", attr: { dtype: A.type("DT_FLOAT"), shape: { shape: { dim: [{ size: "1" }, { size: "4" }] } } } },
      { name: "postprocess/magic", op: "FancyNonMaxSuppression", input: ["image"] },
      { name: "out", op: "Identity", input: ["postprocess/magic"] },
    ];
    fs.writeFileSync(file, JSON.stringify({ format: "graph-model", modelTopology: { node: nodes }, weightsManifest: [] }));
    const err = await convertGraphModelFile(file).catch((e: unknown) => e);
    expect(isObscuraError(err)).toBe(true);
    expect((err as { status: string }).status).toBe("UNIMPLEMENTED");
    expect((err as Error).message).toMatch(/TF op "FancyNonMaxSuppression" \(node "postprocess\/magic"\) is not supported/);
    expect((err as Error).message).toContain("Supported ops:");
    expect(supportedOps()).toContain("_FusedConv2D");
    // Cutting the graph before the op avoids it.
    const ok = await convertGraphModelFile(file, { outputs: { image: "passthrough" } });
    expect(ok.outputs).toEqual([{ name: "passthrough", dtype: "float32", shape: [1, 4] }]);
  });

  it("rejects unknown model names", async () => {
    await expect(ensureModel("nope" as ModelName)).rejects.toThrow(/unknown model "nope"; known models: blazeface-back, centernet/);
  });
});
