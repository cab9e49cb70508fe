/**
 * Second-stage face verification: each candidate box is cut out as a square crop centred on it
 * (side = `cropFactor` x the box's longer side), resized to the verifier's input and scored by a
 * face-crop model. Offers:
 *  - `squareCrop(image, box, factor, size, a, b)`: the crop as float32 NHWC (`a * byte + b`);
 *    pixels outside the image repeat the nearest edge; downscaling averages `k x k` samples;
 *    `rotatedCrop` the same for a square turned by an angle (FaceMesh on tilted faces);
 *  - `facemeshScores(image, boxes, opts)`: MediaPipe FaceMesh's face-presence output (`faceflag`,
 *    0..1) for each box, run in batches.
 */
import type { Box } from "@/lib/geometry";
import { ensureModel } from "./models";
import { ort, session } from "./onnx";
import type { RgbImage } from "./types";

/** Square crop of `size` x `size` centred on `box`, side `factor * max(w, h)` image px (rotatedCrop, upright). */
export function squareCrop(image: RgbImage, box: Box, factor: number, size: number, a = 1, b = 0, out = new Float32Array(size * size * 3), offset = 0): Float32Array {
  const side = Math.max(1, factor * Math.max(box.width, box.height));
  rotatedCrop(image, box.x + box.width / 2, box.y + box.height / 2, side, 0, size, a, b, out, offset);
  return out;
}

/**
 * A `size` x `size` crop of the square of side `side` centred on (cx, cy), turned by `angle`
 * (radians, the crop's x axis along that direction in the image), as NHWC floats `a * byte + b`
 * written at `offset`. Bilinear, with k x k samples per pixel when shrinking; outside the image
 * repeats the edge.
 */
export function rotatedCrop(image: RgbImage, cx: number, cy: number, side: number, angle: number, size: number, a: number, b: number, out: Float32Array, offset: number): void {
  const step = side / size;
  const k = Math.max(1, Math.min(4, Math.round(step)));
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  const { data, width: W, height: H } = image;
  const inv = 1 / (k * k);
  let o = offset;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let r = 0;
      let g = 0;
      let bl = 0;
      for (let sy = 0; sy < k; sy++) {
        for (let sx = 0; sx < k; sx++) {
          const u = (x + (sx + 0.5) / k) * step - side / 2;
          const v = (y + (sy + 0.5) / k) * step - side / 2;
          const fx = Math.min(W - 1, Math.max(0, cx + u * cos - v * sin - 0.5));
          const fy = Math.min(H - 1, Math.max(0, cy + u * sin + v * cos - 0.5));
          const i = Math.floor(fx);
          const j = Math.floor(fy);
          const wx = fx - i;
          const wy = fy - j;
          const i1 = Math.min(W - 1, i + 1);
          const j1 = Math.min(H - 1, j + 1);
          const p00 = (j * W + i) * 3;
          const p01 = (j * W + i1) * 3;
          const p10 = (j1 * W + i) * 3;
          const p11 = (j1 * W + i1) * 3;
          const w00 = (1 - wx) * (1 - wy);
          const w01 = wx * (1 - wy);
          const w10 = (1 - wx) * wy;
          const w11 = wx * wy;
          r += w00 * data[p00]! + w01 * data[p01]! + w10 * data[p10]! + w11 * data[p11]!;
          g += w00 * data[p00 + 1]! + w01 * data[p01 + 1]! + w10 * data[p10 + 1]! + w11 * data[p11 + 1]!;
          bl += w00 * data[p00 + 2]! + w01 * data[p01 + 2]! + w10 * data[p10 + 2]! + w11 * data[p11 + 2]!;
        }
      }
      out[o++] = a * r * inv + b;
      out[o++] = a * g * inv + b;
      out[o++] = a * bl * inv + b;
    }
  }
}

export interface VerifyOptions {
  /** Crop side / the box's longer side. */
  cropFactor: number;
  /** Crops per model run. */
  batch: number;
}

const FM = 192;

/** FaceMesh face-presence probability (0..1) of a square crop around each box. */
export async function facemeshScores(image: RgbImage, boxes: readonly Box[], o: VerifyOptions): Promise<number[]> {
  if (!boxes.length) return [];
  const s = await session(await ensureModel("facemesh"));
  const scores: number[] = [];
  const per = FM * FM * 3;
  for (let start = 0; start < boxes.length; start += o.batch) {
    const n = Math.min(o.batch, boxes.length - start);
    const input = new Float32Array(n * per);
    for (let i = 0; i < n; i++) squareCrop(image, boxes[start + i]!, o.cropFactor, FM, 1 / 255, 0, input, i * per);
    const res = await s.run({ input_1: new ort.Tensor("float32", input, [n, FM, FM, 3]) });
    const flag = res.faceflag!.data as Float32Array;
    for (let i = 0; i < n; i++) scores.push(flag[i]!);
  }
  return scores;
}
