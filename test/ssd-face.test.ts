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
import { ort, session } from "@/server/vision/onnx";
import { SSD_ANCHORS, SSD_SIZE, ensureSsdFaceModel, readSsdWeights } from "@/server/vision/ssd-face";
import { ssdReference as reference } from "../bench/ssd-reference";

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
