/**
 * `node --import tsx bench/models.ts`: latency of each converted model in onnxruntime-node against
 * the original TF.js graph model on the TF.js wasm backend (SIMD, one thread), same input
 * (sample1.jpg stretched to the model size), same run; medians of ROUNDS runs after WARMUP.
 * face-api's SSD face network (not a graph model: rebuilt from its weights, ssd-face.ts) is timed
 * against face-api's own layer code on the same TF.js wasm backend (bench/ssd-reference.ts).
 * ONNX runs twice: with one thread (like the wasm backend), alternating with TF.js so load from
 * other processes hits both alike, then with the production session (server/vision/onnx.ts, all
 * cores unless OBSCURA_ONNX_THREADS) on its own: its pool threads spin after each run and would
 * slow a TF.js run that follows. TF.js computes the same tensors as the ONNX model (faceboxes:
 * boxes/scores before its NMS loop). Figures swing with machine load (recorded in the JSON).
 * Writes bench/results/models.json and prints it. Env: BENCH_ROUNDS (20), BENCH_MODELS (all).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as tf from "@tensorflow/tfjs-core";
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm";
import { type GraphModel, loadGraphModel } from "@tensorflow/tfjs-converter";
import sharp from "sharp";
import { MODEL_SPECS, type ModelName, MODEL_NAMES, ensureModel, modelSourceFile } from "../server/vision/models";
import { onnxThreads, ort, session } from "../server/vision/onnx";
import { SSD_SIZE, ensureSsdFaceModel, readSsdWeights } from "../server/vision/ssd-face";
import { ssdReference } from "./ssd-reference";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const WARMUP = 3;
const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
const progress = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

/** Input size per model (fixed-size models at their size; faceboxes at VGA, movenet at 256). */
const SIZES: Record<ModelName, { width: number; height: number; scale: (v: number) => number; tfInt: boolean; channels?: 1 }> = {
  "blazeface-back": { width: 256, height: 256, scale: (v) => v / 127.5 - 1, tfInt: false },
  centernet: { width: 512, height: 512, scale: (v) => v, tfInt: false },
  faceboxes: { width: 640, height: 480, scale: (v) => v, tfInt: true },
  "movenet-multipose": { width: 256, height: 256, scale: (v) => v, tfInt: true },
  facemesh: { width: 192, height: 192, scale: (v) => v / 255, tfInt: false },
  faceres: { width: 224, height: 224, scale: (v) => v, tfInt: false },
  emotion: { width: 64, height: 64, scale: (v) => (v / 255 - 0.5) * 2, tfInt: false, channels: 1 },
};

async function loadTfjs(jsonFile: string): Promise<GraphModel> {
  const json = JSON.parse(fs.readFileSync(jsonFile, "utf8"));
  const all = Buffer.concat(json.weightsManifest.flatMap((g: { paths: string[] }) => g.paths.map((p) => fs.readFileSync(path.join(path.dirname(jsonFile), p)))));
  return loadGraphModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest.flatMap((g: { weights: unknown[] }) => g.weights),
      weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.length),
    }),
  );
}

const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (v: number) => +v.toFixed(1);

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

interface Subject {
  name: string;
  file: string;
  feeds: Record<string, InstanceType<typeof ort.Tensor>>;
  inputShape: number[];
  /** One TF.js inference on the same input, waiting for the output data. */
  runTfjs: () => Promise<void>;
  dispose: () => void;
}

/** A converted TF.js graph model of MODEL_SPECS and its original, on sample1.jpg stretched to size. */
async function graphModelSubject(name: ModelName): Promise<Subject> {
  const spec = MODEL_SPECS[name];
  const size = SIZES[name];
  const file = await ensureModel(name);
  const img = sharp(SAMPLE).resize(size.width, size.height, { fit: "fill" }).removeAlpha();
  const pixels = await (size.channels === 1 ? img.greyscale().extractChannel(0) : img).raw().toBuffer();
  const x = Float32Array.from(pixels, size.scale);
  const shape = [1, size.height, size.width, size.channels ?? 3];
  const model = await loadTfjs(modelSourceFile(name));
  const input = size.tfInt ? tf.tensor(Int32Array.from(x), shape, "int32") : tf.tensor(x, shape);
  const outputs = Object.keys(spec.convert.outputs as Record<string, string>);
  return {
    name,
    file,
    feeds: { [spec.input.name]: new ort.Tensor("float32", x, shape) },
    inputShape: shape,
    runTfjs: async () => {
      const out = (await model.executeAsync(input, outputs)) as tf.Tensor | tf.Tensor[];
      const list = Array.isArray(out) ? out : [out];
      await Promise.all(list.map((t) => t.data()));
      tf.dispose(list);
    },
    dispose: () => {
      input.dispose();
      model.dispose();
    },
  };
}

/** face-api's SSD face network rebuilt as ONNX, against face-api's own layer code on TF.js. */
async function ssdSubject(): Promise<Subject> {
  const file = await ensureSsdFaceModel();
  const pixels = Float32Array.from(await sharp(SAMPLE).resize(SSD_SIZE, SSD_SIZE, { fit: "fill" }).removeAlpha().raw().toBuffer());
  const weights = await readSsdWeights();
  const shape = [1, SSD_SIZE, SSD_SIZE, 3];
  return { name: "ssd-mobilenetv1-face", file, feeds: { image: new ort.Tensor("float32", pixels, shape) }, inputShape: shape, runTfjs: async () => void ssdReference(weights, pixels), dispose: () => {} };
}

async function benchModel(subject: Subject) {
  const { name, file, feeds, inputShape: shape } = subject;
  const single = await ort.InferenceSession.create(file, { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: "all", executionMode: "sequential" });
  const runTfjs = subject.runTfjs;
  const t = { onnx: [] as number[], onnx1: [] as number[], wasm: [] as number[] };
  // Phase 1: wasm and single-thread ONNX in turn. Phase 2: the production session alone, since
  // its idle pool threads spin after each run and would steal the wasm thread's core.
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    const b = await timed(() => single.run(feeds));
    const c = await timed(runTfjs);
    if (i >= WARMUP) {
      t.onnx1.push(b);
      t.wasm.push(c);
    }
  }
  const prod = await session(file);
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    const a = await timed(() => prod.run(feeds));
    if (i >= WARMUP) t.onnx.push(a);
  }
  subject.dispose();
  await single.release();
  const onnxMs = median(t.onnx);
  const onnx1Ms = median(t.onnx1);
  const tfjsWasmMs = median(t.wasm);
  const r = {
    name,
    inputShape: shape,
    onnxMs: round(onnxMs),
    tfjsWasmMs: round(tfjsWasmMs),
    speedup: +(tfjsWasmMs / onnxMs).toFixed(2),
    onnxThreads: onnxThreads(),
    onnxMs1Thread: round(onnx1Ms),
    speedup1Thread: +(tfjsWasmMs / onnx1Ms).toFixed(2),
  };
  progress(`${name}: onnx ${r.onnxMs} ms (${r.onnxThreads} threads), ${r.onnxMs1Thread} ms (1 thread); tfjs-wasm ${r.tfjsWasmMs} ms; ${r.speedup}x / ${r.speedup1Thread}x`);
  return r;
}

setWasmPaths(path.resolve("node_modules/@tensorflow/tfjs-backend-wasm/dist") + path.sep);
tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
await tf.setBackend("wasm");
await tf.ready();
tf.env().set("PROD", true);

const simd = await tf.env().getAsync("WASM_HAS_SIMD_SUPPORT");

const ALL = [...MODEL_NAMES, "ssd-mobilenetv1-face"];
const names = process.env.BENCH_MODELS?.split(",") ?? ALL;
progress(`${names.join(", ")}: ${WARMUP} warm-up + ${ROUNDS} rounds each (tfjs backend: ${tf.getBackend()}, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(2)})`);
const models = [];
for (const name of names) {
  if (!ALL.includes(name)) throw new Error(`unknown model "${name}" in BENCH_MODELS; known: ${ALL.join(", ")}`);
  models.push(await benchModel(name === "ssd-mobilenetv1-face" ? await ssdSubject() : await graphModelSubject(name as ModelName)));
}
const result = {
  benchmark: "models",
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, loadAverage1m: +os.loadavg()[0].toFixed(2) },
  method: `median of ${ROUNDS} runs after ${WARMUP} warm-up (1-thread ONNX alternating with TF.js, then the production session); onnxruntime-node ${ort.env.versions.node ?? ""} CPU vs TF.js ${tf.version_core} wasm (${simd ? "SIMD" : "no SIMD"}, 1 thread)`,
  models,
};
fs.mkdirSync(path.join("bench", "results"), { recursive: true });
fs.writeFileSync(path.join("bench", "results", "models.json"), JSON.stringify(result, null, 2) + "\n");
console.log(JSON.stringify(result, null, 2));
