/**
 * Second-stage face verification: each candidate box is cut out as a square crop centred on it
 * (side = `cropFactor` x the box's longer side), resized to the verifier's input and scored by a
 * face-crop model. Offers:
 *  - `squareCrop(image, box, factor, size, a, b)`: the crop as float32 NHWC (`a * byte + b`);
 *    pixels outside the image repeat the nearest edge; downscaling averages `k x k` samples;
 *  - `facemeshScores(image, boxes, opts)`: MediaPipe FaceMesh's face-presence output (`faceflag`,
 *    0..1) for each box, run in batches.
 */
import type { Box } from "@/lib/geometry";
import { ensureModel } from "./models";
import { ort, session } from "./onnx";
import type { RgbImage } from "./types";

/** Square crop of `size` x `size` centred on `box`, side `factor * max(w, h)` image px. */
export function squareCrop(image: RgbImage, box: Box, factor: number, size: number, a = 1, b = 0, out = new Float32Array(size * size * 3), offset = 0): Float32Array {
  const side = Math.max(1, factor * Math.max(box.width, box.height));
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const step = side / size;
  // Samples per output pixel along each axis (box filter when shrinking).
  const k = Math.max(1, Math.min(4, Math.round(step)));
  const src = image.data;
  const W = image.width;
  const H = image.height;
  const stride = W * 3;
  const x0 = cx - side / 2;
  const y0 = cy - side / 2;
  const inv = 1 / (k * k);
  let o = offset;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let r = 0;
      let g = 0;
      let bl = 0;
      for (let sy = 0; sy < k; sy++) {
        const fy = Math.min(H - 1, Math.max(0, y0 + (y + (sy + 0.5) / k) * step - 0.5));
        const j = Math.floor(fy);
        const wy = fy - j;
        const row0 = j * stride;
        const row1 = Math.min(H - 1, j + 1) * stride;
        for (let sx = 0; sx < k; sx++) {
          const fx = Math.min(W - 1, Math.max(0, x0 + (x + (sx + 0.5) / k) * step - 0.5));
          const i = Math.floor(fx);
          const wx = fx - i;
          const p0 = i * 3;
          const p1 = Math.min(W - 1, i + 1) * 3;
          const w00 = (1 - wx) * (1 - wy);
          const w01 = wx * (1 - wy);
          const w10 = (1 - wx) * wy;
          const w11 = wx * wy;
          r += w00 * src[row0 + p0]! + w01 * src[row0 + p1]! + w10 * src[row1 + p0]! + w11 * src[row1 + p1]!;
          g += w00 * src[row0 + p0 + 1]! + w01 * src[row0 + p1 + 1]! + w10 * src[row1 + p0 + 1]! + w11 * src[row1 + p1 + 1]!;
          bl += w00 * src[row0 + p0 + 2]! + w01 * src[row0 + p1 + 2]! + w10 * src[row1 + p0 + 2]! + w11 * src[row1 + p1 + 2]!;
        }
      }
      out[o++] = a * r * inv + b;
      out[o++] = a * g * inv + b;
      out[o++] = a * bl * inv + b;
    }
  }
  return out;
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
