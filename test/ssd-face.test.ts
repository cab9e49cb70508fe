/**
 * face-api's SSD MobileNetV1 face detector rebuilt as ONNX: its outputs against a TF.js CPU run of
 * the same network written the way face-api writes it (tf.conv2d / depthwiseConv2d / batchNorm /
 * clipByValue and its box decoding), on a real photo; then the faces it finds in that photo.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import * as tf from "@tensorflow/tfjs-core";
import "@tensorflow/tfjs-backend-cpu";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import type { ConstTensor } from "@/server/vision/convert/tfjs-model";
import { ort, session } from "@/server/vision/onnx";
import { SSD_ANCHORS, SSD_SIZE, ensureSsdFaceModel, readSsdWeights } from "@/server/vision/ssd-face";

const DEMO = path.join(process.cwd(), "node_modules/@vladmandic/face-api/demo");
let dataDir = "";
const saved = process.env.OBSCURA_DATA_DIR;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "obscura-ssd-"));
  process.env.OBSCURA_DATA_DIR = dataDir;
  resetConfig();
  await tf.setBackend("cpu");
});
afterAll(() => {
  if (saved === undefined) delete process.env.OBSCURA_DATA_DIR;
  else process.env.OBSCURA_DATA_DIR = saved;
  resetConfig();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** face-api's forward pass (src/ssdMobilenetv1/*.ts) on TF.js, from the same decoded weights. */
function reference(w: Map<string, ConstTensor>, pixels: Float32Array): { boxes: Float32Array; scores: Float32Array } {
  const t = (name: string) => tf.tensor(w.get(name)!.data as Float32Array, w.get(name)!.shape) as unknown as tf.Tensor1D;
  return tf.tidy(() => {
    const pw = (x: tf.Tensor4D, p: string, s: number) => tf.clipByValue(tf.add(tf.conv2d(x, t(`${p}/weights`) as unknown as tf.Tensor4D, s, "same"), t(`${p}/convolution_bn_offset`)), 0, 6) as tf.Tensor4D;
    let x = tf.sub(tf.div(tf.tensor4d(pixels, [1, SSD_SIZE, SSD_SIZE, 3]), 127.5), 1) as tf.Tensor4D;
    x = pw(x, "MobilenetV1/Conv2d_0_pointwise", 2);
    let conv11 = x;
    for (let i = 1; i <= 13; i++) {
      const p = `MobilenetV1/Conv2d_${i}_depthwise`;
      const s = [2, 4, 6, 12].includes(i) ? 2 : 1;
      let d = tf.depthwiseConv2d(x, t(`${p}/depthwise_weights`) as unknown as tf.Tensor4D, s, "same");
      d = tf.batchNorm<tf.Rank.R4>(d, t(`${p}/BatchNorm/moving_mean`), t(`${p}/BatchNorm/moving_variance`), t(`${p}/BatchNorm/beta`), t(`${p}/BatchNorm/gamma`), 0.0010000000474974513);
      x = pw(tf.clipByValue(d, 0, 6) as tf.Tensor4D, `MobilenetV1/Conv2d_${i}_pointwise`, 1);
      if (i === 11) conv11 = x;
    }
    const extra: tf.Tensor4D[] = [];
    let e = x;
    for (let k = 0; k < 8; k++) {
      e = pw(e, `Prediction/Conv2d_${k}_pointwise`, k % 2 ? 2 : 1);
      if (k % 2) extra.push(e);
    }
    const inputs = [conv11, x, ...extra];
    const enc: tf.Tensor[] = [];
    const cls: tf.Tensor[] = [];
    inputs.forEach((f, k) => {
      const p = `Prediction/BoxPredictor_${k}`;
      enc.push(tf.reshape(tf.add(tf.conv2d(f, t(`${p}/BoxEncodingPredictor/weights`) as unknown as tf.Tensor4D, 1, "same"), t(`${p}/BoxEncodingPredictor/biases`)), [1, -1, 4]));
      cls.push(tf.reshape(tf.add(tf.conv2d(f, t(`${p}/ClassPredictor/weights`) as unknown as tf.Tensor4D, 1, "same"), t(`${p}/ClassPredictor/biases`)), [1, -1, 3]));
    });
    const a = tf.reshape(t("Output/extra_dim"), [-1, 4]);
    const b = tf.reshape(tf.concat(enc, 1), [-1, 4]);
    const [a0, a1, a2, a3] = tf.unstack(tf.transpose(a, [1, 0]));
    const [b0, b1, b2, b3] = tf.unstack(tf.transpose(b, [1, 0]));
    const s0 = tf.sub(a2!, a0!), s1 = tf.sub(a3!, a1!); // prettier-ignore
    const c0 = tf.add(a0!, tf.div(s0, 2)), c1 = tf.add(a1!, tf.div(s1, 2)); // prettier-ignore
    const h0 = tf.div(tf.mul(tf.exp(tf.div(b2!, 5)), s0), 2), h1 = tf.div(tf.mul(tf.exp(tf.div(b3!, 5)), s1), 2); // prettier-ignore
    const m0 = tf.add(tf.mul(tf.div(b0!, 10), s0), c0), m1 = tf.add(tf.mul(tf.div(b1!, 10), s1), c1); // prettier-ignore
    const boxes = tf.transpose(tf.stack([tf.sub(m0, h0), tf.sub(m1, h1), tf.add(m0, h0), tf.add(m1, h1)]), [1, 0]);
    const scores = tf.sigmoid(tf.slice(tf.concat(cls, 1), [0, 0, 1], [-1, -1, 1]));
    return { boxes: boxes.dataSync() as Float32Array, scores: scores.dataSync() as Float32Array };
  });
}

async function samplePixels(): Promise<Float32Array> {
  const raw = await sharp(path.join(DEMO, "sample1.jpg")).rotate().resize(SSD_SIZE, SSD_SIZE, { fit: "fill" }).removeAlpha().raw().toBuffer();
  return Float32Array.from(raw);
}

describe("face-api SSD MobileNetV1 as ONNX", () => {
  it("matches face-api's TF.js network on a real photo", async () => {
    const pixels = await samplePixels();
    const ref = reference(await readSsdWeights(), pixels);
    const s = await session(await ensureSsdFaceModel());
    const out = await s.run({ image: new ort.Tensor("float32", pixels, [1, SSD_SIZE, SSD_SIZE, 3]) });
    const boxes = out.boxes!.data as Float32Array;
    const scores = out.scores!.data as Float32Array;
    expect(out.boxes!.dims).toEqual([1, SSD_ANCHORS, 4]);
    expect(out.scores!.dims).toEqual([1, SSD_ANCHORS]);
    let maxScore = 0, maxBox = 0; // prettier-ignore
    for (let i = 0; i < SSD_ANCHORS; i++) {
      maxScore = Math.max(maxScore, Math.abs(scores[i]! - ref.scores[i]!));
      if (ref.scores[i]! > 0.05) for (let k = 0; k < 4; k++) maxBox = Math.max(maxBox, Math.abs(boxes[4 * i + k]! - ref.boxes[4 * i + k]!));
    }
    expect(maxScore).toBeLessThan(1e-4);
    expect(maxBox).toBeLessThan(1e-4);
    // and the network sees the photo's three faces
    expect([...scores].filter((v) => v > 0.5).length).toBeGreaterThanOrEqual(3);
  }, 120_000);

  it("runs a batch of tiles in one call", async () => {
    const pixels = await samplePixels();
    const two = new Float32Array(pixels.length * 2);
    two.set(pixels);
    two.set(pixels.map((v) => 255 - v), pixels.length);
    const s = await session(await ensureSsdFaceModel());
    const batch = await s.run({ image: new ort.Tensor("float32", two, [2, SSD_SIZE, SSD_SIZE, 3]) });
    const single = await s.run({ image: new ort.Tensor("float32", pixels, [1, SSD_SIZE, SSD_SIZE, 3]) });
    expect(batch.scores!.dims).toEqual([2, SSD_ANCHORS]);
    const a = batch.scores!.data as Float32Array;
    const b = single.scores!.data as Float32Array;
    for (let i = 0; i < SSD_ANCHORS; i += 97) expect(a[i]).toBeCloseTo(b[i]!, 4);
  });
});
