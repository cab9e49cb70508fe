/**
 * face-api's SSD MobileNetV1 face detector (trained on WIDER FACE; `@vladmandic/face-api/model/
 * ssd_mobilenetv1_model*`), built as an ONNX graph from its weights. face-api ships no graph, only
 * a weights manifest that its JS code assembles into a network, so `buildSsdFaceOnnx` writes that
 * same network with our ONNX builder (server/vision/convert/onnx-graph.ts):
 *
 * - input `image` [N, 512, 512, 3] float32 RGB bytes 0..255 (NHWC); in the graph x/127.5 - 1, then NCHW;
 * - MobileNetV1: 3x3/2 conv, then 13 depthwise (batch norm folded into the weights) + pointwise
 *   pairs, every conv with TF "SAME" padding and clipped to 0..6; stride 2 at pairs 2, 4, 6, 12;
 * - 8 extra pointwise layers; six box predictors (1x1 convs) on pair 11 (32x32, 3 anchors a cell),
 *   the backbone output (16x16) and extra layers 1, 3, 5, 7 (8x8 .. 1x1, 6 anchors a cell):
 *   5,118 anchors, in TF's NHWC reshape order;
 * - decoding in the graph, as face-api does: anchors (the `Output/extra_dim` weight, [ymin, xmin,
 *   ymax, xmax] of the 512 square) with centre offsets /10 and log sizes /5.
 * Outputs: `boxes` [N, 5118, 4] [ymin, xmin, ymax, xmax] normalised to the 512 input, `scores`
 * [N, 5118] face probability (sigmoid of the face logit).
 *
 * Cached as `${dataDir}/models/ssd-mobilenetv1-face-<hash>.onnx` (hash over the manifest, the
 * weights and BUILD_VERSION); written atomically. Parity with a TF.js CPU run of face-api's own
 * layer code is tested in test/ssd-face.test.ts.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { config } from "../config";
import { log } from "../log";
import { readWeights } from "./convert";
import { packageDir } from "./models";
import { OnnxGraph, type Value } from "./convert/onnx-graph";
import type { ConstTensor } from "./convert/tfjs-model";

export const SSD_SIZE = 512;
export const SSD_ANCHORS = 5118;
const BUILD_VERSION = 1;
const EPSILON = 0.0010000000474974513;
const MANIFEST = "ssd_mobilenetv1_model-weights_manifest.json";

/** Where face-api's weights are: OBSCURA_FACE_API_MODELS_DIR, the package as resolved from here, or ./node_modules. */
export function faceApiModelDir(): string {
  return packageDir("@vladmandic/face-api", "model", MANIFEST, "OBSCURA_FACE_API_MODELS_DIR");
}

/** face-api's SSD weights, decoded (uint8-quantised in the package). */
export async function readSsdWeights(dir = faceApiModelDir()): Promise<Map<string, ConstTensor>> {
  const file = path.join(dir, MANIFEST);
  const manifest = JSON.parse(await fs.promises.readFile(file, "utf8"));
  return readWeights(manifest, dir, file);
}

/** HWIO (TF) -> OIHW (ONNX). */
function oihw(t: ConstTensor, scale?: Float32Array): ConstTensor {
  const [kh, kw, ci, co] = t.shape as [number, number, number, number];
  const src = t.data as Float32Array;
  const out = new Float32Array(src.length);
  for (let y = 0; y < kh; y++)
    for (let x = 0; x < kw; x++)
      for (let i = 0; i < ci; i++)
        for (let o = 0; o < co; o++) out[((o * ci + i) * kh + y) * kw + x] = src[((y * kw + x) * ci + i) * co + o]! * (scale ? scale[o]! : 1);
  return { dtype: "float32", shape: [co, ci, kh, kw], data: out };
}

/** Depthwise [kh, kw, C, 1] (TF) -> [C, 1, kh, kw] grouped conv weights, each channel scaled. */
function depthwise(t: ConstTensor, scale: Float32Array): ConstTensor {
  const [kh, kw, c] = t.shape as [number, number, number, number];
  const src = t.data as Float32Array;
  const out = new Float32Array(src.length);
  for (let y = 0; y < kh; y++) for (let x = 0; x < kw; x++) for (let i = 0; i < c; i++) out[(i * kh + y) * kw + x] = src[(y * kw + x) * c + i]! * scale[i]!;
  return { dtype: "float32", shape: [c, 1, kh, kw], data: out };
}

/** The ONNX model (bytes) of face-api's SSD face detector from its decoded weights. */
export function buildSsdFaceOnnx(w: Map<string, ConstTensor>): Uint8Array {
  const get = (name: string): ConstTensor => {
    const t = w.get(name);
    if (!t) throw new ObscuraError("INVALID_ARGUMENT", `face-api SSD weights lack "${name}"`);
    return t;
  };
  const g = new OnnxGraph();
  const N = -1;
  const input = g.addInput("image", "float32", [N, SSD_SIZE, SSD_SIZE, 3]);
  const scaled = g.op1("Mul", [input, g.scalar("float32", 1 / 127.5)], {}, { dtype: "float32", shape: input.shape }, "pre/mul");
  const norm = g.op1("Sub", [scaled, g.scalar("float32", 1)], {}, { dtype: "float32", shape: input.shape }, "pre/sub");
  let x: Value = g.op1("Transpose", [norm], { perm: { ints: [0, 3, 1, 2] } }, { dtype: "float32", shape: [N, 3, SSD_SIZE, SSD_SIZE] }, "pre/nchw");
  const zero = g.scalar("float32", 0);
  const six = g.scalar("float32", 6);
  let side = SSD_SIZE;

  const conv = (v: Value, weight: ConstTensor, bias: ConstTensor | Float32Array, stride: number, group: number, relu6: boolean, hint: string): Value => {
    const co = weight.shape[0]!;
    const kh = weight.shape[2]!;
    const out = Math.ceil(side / stride);
    const b = bias instanceof Float32Array ? bias : (bias.data as Float32Array);
    const y = g.op1(
      "Conv",
      [v, g.constant("float32", weight.shape, weight.data), g.constant("float32", [co], b)],
      { kernel_shape: { ints: [kh, kh] }, strides: { ints: [stride, stride] }, group: { i: group }, ...(kh > 1 ? { auto_pad: { s: "SAME_UPPER" } } : {}) },
      { dtype: "float32", shape: [N, co, out, out] },
      hint,
    );
    return relu6 ? g.op1("Clip", [y, zero, six], {}, { dtype: "float32", shape: y.shape }, `${hint}/relu6`) : y;
  };
  const pointwise = (v: Value, prefix: string, stride: number): Value => {
    const y = conv(v, oihw(get(`${prefix}/weights`)), get(`${prefix}/convolution_bn_offset`), stride, 1, true, prefix);
    side = Math.ceil(side / stride);
    return y;
  };

  x = pointwise(x, "MobilenetV1/Conv2d_0_pointwise", 2);
  let conv11: Value | undefined;
  for (let i = 1; i <= 13; i++) {
    const p = `MobilenetV1/Conv2d_${i}_depthwise`;
    const gamma = get(`${p}/BatchNorm/gamma`).data as Float32Array;
    const beta = get(`${p}/BatchNorm/beta`).data as Float32Array;
    const mean = get(`${p}/BatchNorm/moving_mean`).data as Float32Array;
    const variance = get(`${p}/BatchNorm/moving_variance`).data as Float32Array;
    const s = gamma.map((gm, c) => gm / Math.sqrt(variance[c]! + EPSILON));
    const bias = beta.map((bt, c) => bt - mean[c]! * s[c]!);
    const stride = [2, 4, 6, 12].includes(i) ? 2 : 1;
    x = conv(x, depthwise(get(`${p}/depthwise_weights`), s), bias, stride, gamma.length, true, p);
    side = Math.ceil(side / stride);
    x = pointwise(x, `MobilenetV1/Conv2d_${i}_pointwise`, 1);
    if (i === 11) conv11 = x;
  }
  const sides: number[] = [];
  const features: Value[] = [conv11!, x];
  sides.push(side * 2, side);
  let e = x;
  for (let k = 0; k < 8; k++) {
    e = pointwise(e, `Prediction/Conv2d_${k}_pointwise`, k % 2 === 1 ? 2 : 1);
    if (k % 2 === 1) {
      features.push(e);
      sides.push(side);
    }
  }
  const boxParts: Value[] = [];
  const logitParts: Value[] = [];
  features.forEach((f, k) => {
    const p = `Prediction/BoxPredictor_${k}`;
    const s = sides[k]!;
    for (const [kind, depth, parts] of [["BoxEncodingPredictor", 4, boxParts], ["ClassPredictor", 3, logitParts]] as const) {
      side = s;
      const wt = get(`${p}/${kind}/weights`);
      const y = conv(f, oihw(wt), get(`${p}/${kind}/biases`), 1, 1, false, `${p}/${kind}`);
      const nhwc = g.op1("Transpose", [y], { perm: { ints: [0, 2, 3, 1] } }, { dtype: "float32", shape: [N, s, s, wt.shape[3]!] }, `${p}/${kind}/nhwc`);
      const count = (s * s * wt.shape[3]!) / depth;
      parts.push(g.op1("Reshape", [nhwc, g.int64([0, count, depth])], {}, { dtype: "float32", shape: [N, count, depth] }, `${p}/${kind}/reshape`));
    }
  });
  const enc = g.op1("Concat", boxParts, { axis: { i: 1 } }, { dtype: "float32", shape: [N, SSD_ANCHORS, 4] }, "box_encodings");
  const logits = g.op1("Concat", logitParts, { axis: { i: 1 } }, { dtype: "float32", shape: [N, SSD_ANCHORS, 3] }, "class_logits");

  // Decoding against the anchors ([ymin, xmin, ymax, xmax]).
  const anchors = get("Output/extra_dim").data as Float32Array;
  if (anchors.length !== SSD_ANCHORS * 4) throw new ObscuraError("INVALID_ARGUMENT", `face-api SSD anchors: expected ${SSD_ANCHORS * 4} values, got ${anchors.length}`);
  const centre = new Float32Array(SSD_ANCHORS * 2);
  const sizeTenth = new Float32Array(SSD_ANCHORS * 2);
  const sizeHalf = new Float32Array(SSD_ANCHORS * 2);
  for (let i = 0; i < SSD_ANCHORS; i++) {
    for (let d = 0; d < 2; d++) {
      const lo = anchors[4 * i + d]!;
      const hi = anchors[4 * i + 2 + d]!;
      centre[2 * i + d] = (lo + hi) / 2;
      sizeTenth[2 * i + d] = (hi - lo) / 10;
      sizeHalf[2 * i + d] = (hi - lo) / 2;
    }
  }
  const slice = (v: Value, from: number, to: number, hint: string) =>
    g.op1("Slice", [v, g.int64([from]), g.int64([to]), g.int64([2])], {}, { dtype: "float32", shape: [N, SSD_ANCHORS, to - from] }, hint);
  const pair = { dtype: "float32" as const, shape: [N, SSD_ANCHORS, 2] };
  const c = g.op1("Add", [g.op1("Mul", [slice(enc, 0, 2, "dec/yx"), g.constant("float32", [1, SSD_ANCHORS, 2], sizeTenth)], {}, pair, "dec/yx_scaled"), g.constant("float32", [1, SSD_ANCHORS, 2], centre)], {}, pair, "dec/centre");
  const hw = g.op1("Mul", [slice(enc, 2, 4, "dec/hw"), g.scalar("float32", 0.2)], {}, pair, "dec/hw_scaled");
  const half = g.op1("Mul", [g.op1("Exp", [hw], {}, pair, "dec/exp"), g.constant("float32", [1, SSD_ANCHORS, 2], sizeHalf)], {}, pair, "dec/half");
  const lo = g.op1("Sub", [c, half], {}, pair, "dec/lo");
  const hi = g.op1("Add", [c, half], {}, pair, "dec/hi");
  g.addOutput("boxes", g.op1("Concat", [lo, hi], { axis: { i: 2 } }, { dtype: "float32", shape: [N, SSD_ANCHORS, 4] }, "dec/boxes"));
  const face = g.op1("Sigmoid", [slice(logits, 1, 2, "dec/face_logit")], {}, { dtype: "float32", shape: [N, SSD_ANCHORS, 1] }, "dec/sigmoid");
  g.addOutput("scores", g.op1("Reshape", [face, g.int64([0, SSD_ANCHORS])], {}, { dtype: "float32", shape: [N, SSD_ANCHORS] }, "dec/scores"));
  return g.encode({
    producer: "obscura",
    doc: "SSD MobileNetV1 face detector of @vladmandic/face-api (WIDER FACE), rebuilt from its weights.",
    props: { source: "@vladmandic/face-api/model/ssd_mobilenetv1_model", build: String(BUILD_VERSION) },
  });
}

let pending: { key: string; job: Promise<string> } | undefined;

/** The path of the SSD face ONNX file, built from face-api's weights on first use. */
export async function ensureSsdFaceModel(): Promise<string> {
  const dir = faceApiModelDir();
  const target = path.join(config().dataDir, "models");
  const key = `${dir}\0${target}`;
  if (pending?.key === key) {
    const file = await pending.job.catch(() => null);
    if (file && fs.existsSync(file)) return file;
  }
  const job = (async () => {
    const manifest = await fs.promises.readFile(path.join(dir, MANIFEST));
    const h = createHash("sha256").update(manifest);
    for (const p of (JSON.parse(manifest.toString("utf8")) as Array<{ paths: string[] }>).flatMap((gr) => gr.paths)) h.update(await fs.promises.readFile(path.join(dir, p)));
    h.update(`build:${BUILD_VERSION}`);
    const file = path.join(target, `ssd-mobilenetv1-face-${h.digest("hex").slice(0, 12)}.onnx`);
    if (fs.existsSync(file)) return file;
    const t0 = performance.now();
    const bytes = buildSsdFaceOnnx(await readSsdWeights(dir));
    await fs.promises.mkdir(target, { recursive: true });
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      await fs.promises.writeFile(tmp, bytes);
      await fs.promises.rename(tmp, file);
    } catch (e) {
      await fs.promises.rm(tmp, { force: true });
      throw e;
    }
    log.info("built model", { model: "ssd-mobilenetv1-face", file, ms: Math.round(performance.now() - t0), bytes: bytes.length });
    return file;
  })();
  pending = { key, job };
  return job;
}

export interface SsdPass {
  /** Tiles across the longer side (1 = the whole image, letterboxed into the 512 square). */
  across: number;
  /** Overlap of neighbouring tiles, as a fraction of the tile. */
  overlap: number;
}

export interface SsdCandidate {
  box: { x: number; y: number; width: number; height: number };
  /** The model's face probability. */
  score: number;
}

/** Square regions of one pass (image pixels) and how each maps into the 512 input. */
export function ssdRegions(width: number, height: number, pass: SsdPass): Array<{ x: number; y: number; side: number }> {
  const long = Math.max(width, height);
  if (pass.across <= 1) return [{ x: 0, y: 0, side: long }];
  const side = Math.max(1, Math.min(width, height, Math.round(long / (pass.across - (pass.across - 1) * pass.overlap))));
  const starts = (len: number): number[] => {
    if (len <= side) return [0];
    const n = Math.ceil((len - side) / (side * (1 - pass.overlap))) + 1;
    const step = (len - side) / (n - 1);
    return Array.from({ length: n }, (_, i) => Math.round(i * step));
  };
  return starts(height).flatMap((y) => starts(width).map((x) => ({ x, y, side })));
}

/** One region as a 512x512 NHWC float tensor (bytes 0..255); parts outside the image are black. */
async function regionInput(image: { data: Uint8Array; width: number; height: number }, r: { x: number; y: number; side: number }): Promise<Float32Array> {
  const { default: sharp } = await import("sharp");
  const w = Math.min(r.side, image.width - r.x);
  const h = Math.min(r.side, image.height - r.y);
  const scale = SSD_SIZE / r.side;
  const tw = Math.max(1, Math.round(w * scale));
  const th = Math.max(1, Math.round(h * scale));
  const src = Buffer.from(image.data.buffer, image.data.byteOffset, image.width * image.height * 3);
  const raw = await sharp(src, { raw: { width: image.width, height: image.height, channels: 3 } })
    .extract({ left: r.x, top: r.y, width: w, height: h })
    .resize(tw, th, { fit: "fill", kernel: scale < 1 ? "lanczos3" : "cubic" })
    .raw()
    .toBuffer();
  const out = new Float32Array(SSD_SIZE * SSD_SIZE * 3);
  for (let y = 0; y < th; y++) {
    const row = y * tw * 3;
    const o = y * SSD_SIZE * 3;
    for (let i = 0; i < tw * 3; i++) out[o + i] = raw[row + i]!;
  }
  return out;
}

/**
 * SSD face candidates of `image` over the given passes (all regions of all passes batched,
 * `batch` at a time), boxes in image pixels, model scores >= `minScore`, before any merging.
 */
export async function ssdFaceCandidates(image: { data: Uint8Array; width: number; height: number }, passes: readonly SsdPass[], minScore: number, batch = 4): Promise<SsdCandidate[]> {
  const { ort, session } = await import("./onnx");
  const s = await session(await ensureSsdFaceModel());
  const regions = passes.flatMap((p) => ssdRegions(image.width, image.height, p));
  const out: SsdCandidate[] = [];
  for (let k = 0; k < regions.length; k += batch) {
    const part = regions.slice(k, k + batch);
    const input = new Float32Array(part.length * SSD_SIZE * SSD_SIZE * 3);
    const tensors = await Promise.all(part.map((r) => regionInput(image, r)));
    tensors.forEach((t, i) => input.set(t, i * t.length));
    const res = await s.run({ image: new ort.Tensor("float32", input, [part.length, SSD_SIZE, SSD_SIZE, 3]) });
    const boxes = res.boxes!.data as Float32Array;
    const scores = res.scores!.data as Float32Array;
    part.forEach((r, i) => {
      for (let a = 0; a < SSD_ANCHORS; a++) {
        const score = scores[i * SSD_ANCHORS + a]!;
        if (!(score >= minScore)) continue;
        const o = (i * SSD_ANCHORS + a) * 4;
        const y0 = Math.max(0, boxes[o]!), x0 = Math.max(0, boxes[o + 1]!), y1 = Math.min(1, boxes[o + 2]!), x1 = Math.min(1, boxes[o + 3]!); // prettier-ignore
        if (!(x1 > x0 && y1 > y0)) continue;
        const box = { x: r.x + x0 * r.side, y: r.y + y0 * r.side, width: (x1 - x0) * r.side, height: (y1 - y0) * r.side };
        // clip to the image (letterbox padding lies outside it)
        const cx1 = Math.min(image.width, box.x + box.width), cy1 = Math.min(image.height, box.y + box.height); // prettier-ignore
        if (cx1 - box.x < 1 || cy1 - box.y < 1) continue;
        out.push({ score, box: { x: box.x, y: box.y, width: cx1 - box.x, height: cy1 - box.y } });
      }
    });
  }
  return out;
}
