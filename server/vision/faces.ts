/**
 * Face detection for redaction: three models as independent sources, fused.
 * - FaceBoxes (TF object-detection export, converted to ONNX) at several scales of the whole
 *   image: its smallest anchors are 32 px of its input, so faces under ~24 px are only found when
 *   the image is upscaled; each pass `{ scale, minFace, maxFace }` runs on the image resized by
 *   `scale` and keeps boxes whose height in that input lies in [minFace, maxFace]. A pass whose
 *   input would exceed `maxInputPixels` runs on overlapping tiles instead (memory, not quality).
 * - BlazeFace-back (fixed batch 1) on 256x256 tiles overlapping by 25%.
 * - face-api's SSD MobileNetV1 (trained on WIDER FACE; ssd-face.ts) on the whole image
 *   letterboxed into 512x512 and on 3x3 overlapping square tiles (the small faces).
 * FaceBoxes and BlazeFace scores are first mapped by `calibrate` so that each one's tuned point
 * reads 0.15; SSD's are its probabilities. Then fusion (face-fusion.ts): candidates cluster by
 * IoU, a cluster scores the noisy-OR of its sources' best scores (agreement between models is the
 * strongest evidence there is) and its box is the union of its strong members; the fused score
 * `fusion.reference` reads 0.15, the engine's default threshold. Boxes are tight face boxes (the
 * engine expands them by faceBoxExpansionFactor), clipped to the image. An optional FaceMesh veto
 * (`verify`, off: face-verify.ts) re-scores large boxes on a crop.
 *
 * Measured on data/faces-dev (WIDER crowds ~1024 px; a face is found when one box, x1.5, covers
 * 70% of it): found for faces >= 40 / 20-40 / 10-20 px high, boxes per image touching no face:
 *   these defaults, threshold 0.15, all 242 images   97.0 / 95.8 / 89.1 %, 7.6 false/img
 *   former FaceBoxes + BlazeFace union (all 242)     94.6 / 86.1 / 69.2 %, 7.7 false/img
 *   every 3rd image (81), threshold 0.15             97.6 / 95.4 / 91.5 %, 7.2 false/img, ~1.5 s/img
 *   former FaceBoxes + BlazeFace union (81)           94.9 / 86.5 / 75.2 %, 9.4 false/img, ~0.7 s/img
 * The threshold trades recall for stray boxes (every 3rd image; innerObjectsConfidenceThreshold):
 *   0.21: 97.0 / 94.5 / 88.5 %, 5.3   0.27: 96.4 / 92.9 / 85.0 %, 3.9   0.39: 94.6 / 89.6 / 79.4 %, 2.4
 *   0.51: 94.0 / 84.4 / 73.7 %, 1.4   0.64: 93.8 / 82.5 / 66.7 %, 0.57  0.76: 92.6 / 77.9 / 58.0 %, 0.20
 * No setting of these models reaches >= 98 % of faces >= 40 px: the misses are mostly profiles,
 * faces behind instruments and heavily occluded faces no source scores above ~0.1; many "false"
 * boxes are unlabelled faces (blurred crowd faces, statues, toys) or backs of heads. SSD's 3x3
 * tiles cost about half the time. The FaceMesh veto (crop 1.5x, minScore 0.02, boxes >= 40 px
 * below 0.9) cut false boxes by 30% but lost 5.6 points of faces >= 40 px (it rejects profiles
 * and occluded faces), ~10 ms per crop: off by default.
 * Video (schedule.ts) runs FaceBoxes + BlazeFace only, fused with VIDEO_FACE_REFERENCE (0.25:
 * 96.7 / 91.1 / 67.0 %, 3.6 stray boxes per image on every 3rd image), the tracker adding frames.
 */
import sharp from "sharp";
import { type Box, clip, coverage, iou } from "@/lib/geometry";
import { ObscuraError } from "@/lib/errors";
import { facemeshScores } from "./face-verify";
import { type FusionOptions, type SourcedCandidate, fuseFaces } from "./face-fusion";
import { type SsdPass, ssdFaceCandidates } from "./ssd-face";
import { ensureModel } from "./models";
import { ort, session } from "./onnx";
import type { DetectOptions, Detection, Detector, ObjectType, RgbImage } from "./types";

export interface FaceboxesPass {
  /** Resize factor of the image for this pass (2 = twice the width and height). */
  scale: number;
  /** Keep boxes at least this high / at most this high, in pixels of the pass's input. */
  minFace: number;
  maxFace: number;
  /** The model score reported as 0.15 (the engine's default threshold); see `calibrate`. */
  reference: number;
}

export interface BlazefaceTiling {
  /** Tile side in image pixels (each tile is stretched to 256x256); 0 turns BlazeFace off. */
  tile: number;
  /** Overlap between neighbouring tiles as a fraction of the tile. */
  overlap: number;
  /** Keep boxes at least this high, in pixels of the 256 input. */
  minFace: number;
  /** The model score reported as 0.15; see `calibrate`. */
  reference: number;
}

/**
 * Fusion of the sources (face-fusion.ts): every FaceBoxes pass, BlazeFace and every SSD pass is a
 * source; candidates are clustered, a cluster scores the noisy-OR of its sources' best scores and
 * its box is the union of its strong members. `reference` is the fused score reported as 0.15
 * (the engine's default threshold); `minSource` the lowest score (each source's own scale:
 * calibrated for FaceBoxes and BlazeFace, the model probability for SSD) a candidate needs to
 * take part at all.
 */
export interface FaceFusion {
  reference: number;
  minSource: { faceboxes: number; blazeface: number; ssd: number };
  joinIou: number;
  unionShare: number;
}

/**
 * Optional second stage (off by default: it costs ~10 ms per crop and loses profile and occluded
 * faces, see the header): FaceMesh's face-presence score on a square crop around each reported box
 * at least `minFace` px high and scoring below `confident`; the box is dropped when the score is
 * below `minScore`. `minFace: 0` turns it off.
 */
export interface FaceVerification {
  minFace: number;
  confident: number;
  minScore: number;
  /** Crop side / the box's longer side. */
  cropFactor: number;
  /** Crops per FaceMesh run. */
  batch: number;
}

export interface FaceOptions {
  passes: FaceboxesPass[];
  /** face-api's SSD MobileNetV1 (WIDER FACE) passes: the whole image letterboxed, and/or tiles. */
  ssd: SsdPass[];
  /** Largest model input (pixels) run in one piece; larger passes are tiled. */
  maxInputPixels: number;
  blazeface: BlazefaceTiling;
  fusion: FaceFusion;
  verify: FaceVerification;
  nmsIou: number;
  nmsContained: number;
  /** Largest candidates kept per pass before merging (highest scores). */
  maxCandidates: number;
}

/** Constructor options: any subset, nested groups (blazeface, fusion, verify) field by field. */
export type FaceOptionsInput = Partial<Omit<FaceOptions, "blazeface" | "fusion" | "verify">> & {
  blazeface?: Partial<BlazefaceTiling>;
  fusion?: Partial<Omit<FaceFusion, "minSource">> & { minSource?: Partial<FaceFusion["minSource"]> };
  verify?: Partial<FaceVerification>;
};

export const FACE_DEFAULTS: Readonly<FaceOptions> = {
  passes: [
    { scale: 1, minFace: 16, maxFace: 100000, reference: 0.3 },
    { scale: 2, minFace: 16, maxFace: 400, reference: 0.25 },
  ],
  maxInputPixels: 4096 * 2304,
  blazeface: { tile: 256, overlap: 0.25, minFace: 8, reference: 0.5 },
  ssd: [
    { across: 1, overlap: 0.25 },
    { across: 3, overlap: 0.25 },
  ],
  fusion: { reference: 0.3, minSource: { faceboxes: 0.05, blazeface: 0.05, ssd: 0.1 }, joinIou: 0.3, unionShare: 0.5 },
  verify: { minFace: 0, confident: 0.9, minScore: 0.02, cropFactor: 1.5, batch: 16 },
  nmsIou: 0.4,
  nmsContained: 0.7,
  maxCandidates: 3000,
};

export interface Candidate {
  box: Box;
  score: number;
}

/** Score every detector reports at its `reference` model score (the engine's default threshold). */
export const REFERENCE_SCORE = 0.15;

/**
 * Model score -> reported score: piecewise linear and increasing, `reference` -> 0.15, 0 -> 0,
 * 1 -> 1. FaceBoxes' softmax gives thousands of anchors 0.15..0.25 on textures, so its raw scores
 * cannot meet the engine's inner threshold (0.15) directly; each source is mapped so that 0.15
 * means its tuned operating point.
 */
export function calibrate(raw: number, reference: number): number {
  if (raw >= reference) return REFERENCE_SCORE + ((raw - reference) / (1 - reference)) * (1 - REFERENCE_SCORE);
  return (REFERENCE_SCORE * raw) / reference;
}

/** Inverse of `calibrate`: the model score reported as `score`. */
export function uncalibrate(score: number, reference: number): number {
  if (score >= REFERENCE_SCORE) return reference + ((score - REFERENCE_SCORE) / (1 - REFERENCE_SCORE)) * (1 - reference);
  return (score * reference) / REFERENCE_SCORE;
}

interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Overlapping tiles of `size` (image px) covering a `width` x `height` image; one tile when it fits. */
export function tileGrid(width: number, height: number, size: number, overlap: number): Region[] {
  const starts = (len: number): number[] => {
    if (len <= size) return [0];
    const n = Math.ceil((len - size) / (size * (1 - overlap))) + 1;
    const step = (len - size) / (n - 1);
    return Array.from({ length: n }, (_, i) => Math.round(i * step));
  };
  const out: Region[] = [];
  for (const y of starts(height)) {
    for (const x of starts(width)) out.push({ x, y, width: Math.min(size, width), height: Math.min(size, height) });
  }
  return out;
}

/** Greedy merge: IoU above `iouMax` or `containedMin` of the area inside a better box drops a candidate. */
export function mergeFaces<T extends Candidate>(items: readonly T[], iouMax: number, containedMin: number): T[] {
  const sorted = [...items].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  for (const c of sorted) {
    if (kept.some((k) => iou(k.box, c.box) > iouMax || coverage(c.box, k.box) >= containedMin)) continue;
    kept.push(c);
  }
  return kept;
}

function checkImage(image: RgbImage): void {
  if (!(image.width > 0 && image.height > 0) || image.data.length < image.width * image.height * 3) {
    throw new ObscuraError("INVALID_ARGUMENT", `face detection needs a packed RGB image, got ${image.width}x${image.height} with ${image.data.length} bytes`);
  }
}

/**
 * A region of the image resized to `w` x `h` as float32 NHWC, each value `a * byte + b`.
 * Same size or upscaling: bilinear in JS (half-pixel centres); downscaling: sharp (lanczos3).
 */
export async function regionTensor(image: RgbImage, r: Region, w: number, h: number, a = 1, b = 0): Promise<Float32Array> {
  const out = new Float32Array(w * h * 3);
  if (w < r.width || h < r.height) {
    const src = Buffer.from(image.data.buffer, image.data.byteOffset, image.width * image.height * 3);
    const { data, info } = await sharp(src, { raw: { width: image.width, height: image.height, channels: 3 } })
      .extract({ left: r.x, top: r.y, width: r.width, height: r.height })
      .resize(w, h, { fit: "fill", kernel: "lanczos3" })
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new ObscuraError("INTERNAL", `resize returned ${info.channels} channels, expected 3`);
    for (let i = 0; i < out.length; i++) out[i] = a * data[i]! + b;
    return out;
  }
  const src = image.data;
  const stride = image.width * 3;
  if (w === r.width && h === r.height) {
    let o = 0;
    for (let y = 0; y < h; y++) {
      let p = (r.y + y) * stride + r.x * 3;
      for (let i = 0; i < w * 3; i++) out[o++] = a * src[p++]! + b;
    }
    return out;
  }
  const x0 = new Int32Array(w);
  const x1 = new Int32Array(w);
  const fx = new Float32Array(w);
  for (let x = 0; x < w; x++) {
    const sx = Math.min(r.width - 1, Math.max(0, ((x + 0.5) * r.width) / w - 0.5));
    const i = Math.floor(sx);
    x0[x] = (r.x + i) * 3;
    x1[x] = (r.x + Math.min(r.width - 1, i + 1)) * 3;
    fx[x] = sx - i;
  }
  let o = 0;
  for (let y = 0; y < h; y++) {
    const sy = Math.min(r.height - 1, Math.max(0, ((y + 0.5) * r.height) / h - 0.5));
    const j = Math.floor(sy);
    const fy = sy - j;
    const row0 = (r.y + j) * stride;
    const row1 = (r.y + Math.min(r.height - 1, j + 1)) * stride;
    for (let x = 0; x < w; x++) {
      const f = fx[x]!;
      const p00 = row0 + x0[x]!;
      const p01 = row0 + x1[x]!;
      const p10 = row1 + x0[x]!;
      const p11 = row1 + x1[x]!;
      for (let c = 0; c < 3; c++) {
        const top = src[p00 + c]! + (src[p01 + c]! - src[p00 + c]!) * f;
        const bottom = src[p10 + c]! + (src[p11 + c]! - src[p10 + c]!) * f;
        out[o++] = a * (top + (bottom - top) * fy) + b;
      }
    }
  }
  return out;
}

/** Top `max` candidates of a list (by score). */
function top<T extends Candidate>(items: T[], max: number): T[] {
  if (items.length <= max) return items;
  return items.sort((a, b) => b.score - a.score).slice(0, max);
}

/** FaceBoxes on one region at one scale; boxes in image pixels. */
async function faceboxesRegion(image: RgbImage, r: Region, pass: FaceboxesPass, threshold: number, maxCandidates: number): Promise<Candidate[]> {
  const w = Math.max(1, Math.round(r.width * pass.scale));
  const h = Math.max(1, Math.round(r.height * pass.scale));
  const input = await regionTensor(image, r, w, h);
  const s = await session(await ensureModel("faceboxes"));
  const out = await s.run({ image_tensor: new ort.Tensor("float32", input, [1, h, w, 3]) });
  const boxes = out.boxes!.data as Float32Array;
  const scores = out.scores!.data as Float32Array;
  const found: Candidate[] = [];
  const rawMin = uncalibrate(threshold, pass.reference);
  for (let i = 0; i < scores.length; i++) {
    const raw = scores[i]!;
    if (!(raw >= rawMin)) continue;
    const score = calibrate(raw, pass.reference);
    const y0 = boxes[4 * i]!;
    const x0 = boxes[4 * i + 1]!;
    const y1 = boxes[4 * i + 2]!;
    const x1 = boxes[4 * i + 3]!;
    const hIn = (y1 - y0) * h;
    if (hIn < pass.minFace || hIn > pass.maxFace || x1 <= x0) continue;
    found.push({ score, box: { x: r.x + x0 * r.width, y: r.y + y0 * r.height, width: (x1 - x0) * r.width, height: (y1 - y0) * r.height } });
  }
  return top(found, maxCandidates);
}

export async function faceboxesPass(image: RgbImage, pass: FaceboxesPass, o: FaceOptions, threshold: number): Promise<Candidate[]> {
  const inPixels = image.width * image.height * pass.scale * pass.scale;
  if (inPixels <= o.maxInputPixels) return faceboxesRegion(image, { x: 0, y: 0, width: image.width, height: image.height }, pass, threshold, o.maxCandidates);
  // Strips along the longer side, each overlapping the next by the largest face kept.
  const n = Math.ceil(inPixels / o.maxInputPixels);
  const overlap = Math.ceil((pass.maxFace / pass.scale) * 1.1);
  const out: Candidate[] = [];
  for (const r of strips(image.width, image.height, n, overlap)) out.push(...(await faceboxesRegion(image, r, pass, threshold, o.maxCandidates)));
  return out;
}

/** `n` strips across the longer side of a `width` x `height` image, neighbours overlapping by `overlap` px. */
export function strips(width: number, height: number, n: number, overlap: number): Region[] {
  const horizontal = width >= height;
  const len = horizontal ? width : height;
  const out: Region[] = [];
  for (let i = 0; i < n; i++) {
    const a = Math.max(0, Math.floor((i * len) / n - overlap / 2));
    const b = Math.min(len, Math.ceil(((i + 1) * len) / n + overlap / 2));
    out.push(horizontal ? { x: a, y: 0, width: b - a, height } : { x: 0, y: a, width, height: b - a });
  }
  return out;
}

const BF = 256;
let bfAnchors: Float32Array | null = null;
/** BlazeFace anchor centres (x, y) in input pixels: stride 16 (2 per cell) then stride 32 (6 per cell). */
function blazefaceAnchors(): Float32Array {
  if (bfAnchors) return bfAnchors;
  const a = new Float32Array(896 * 2);
  let k = 0;
  for (const [stride, per] of [
    [16, 2],
    [32, 6],
  ] as const) {
    const n = BF / stride;
    for (let row = 0; row < n; row++)
      for (let col = 0; col < n; col++)
        for (let j = 0; j < per; j++) {
          a[k++] = (col + 0.5) * stride;
          a[k++] = (row + 0.5) * stride;
        }
  }
  return (bfAnchors = a);
}

/** BlazeFace-back on square tiles; boxes in image pixels. */
export async function blazefaceTiles(image: RgbImage, t: BlazefaceTiling, threshold: number): Promise<Candidate[]> {
  const s = await session(await ensureModel("blazeface-back"));
  const anchors = blazefaceAnchors();
  const out: Candidate[] = [];
  const rawMin = uncalibrate(threshold, t.reference);
  const side = Math.min(t.tile, image.width, image.height);
  // The converted model takes batch 1 only: one run per tile.
  for (const r of tileGrid(image.width, image.height, side, t.overlap)) {
    const input = await regionTensor(image, r, BF, BF, 1 / 127.5, -1);
    const res = await s.run({ input: new ort.Tensor("float32", input, [1, BF, BF, 3]) });
    const parts: Array<[Float32Array, Float32Array, number]> = [
      [res.logits_stride16!.data as Float32Array, res.regressors_stride16!.data as Float32Array, 0],
      [res.logits_stride32!.data as Float32Array, res.regressors_stride32!.data as Float32Array, 512],
    ];
    const sx = r.width / BF;
    const sy = r.height / BF;
    for (const [logits, reg, base] of parts) {
      for (let i = 0; i < logits.length; i++) {
        const raw = 1 / (1 + Math.exp(-logits[i]!));
        if (!(raw >= rawMin)) continue;
        const score = calibrate(raw, t.reference);
        const ax = anchors[2 * (base + i)]!;
        const ay = anchors[2 * (base + i) + 1]!;
        const cx = ax + reg[16 * i]!;
        const cy = ay + reg[16 * i + 1]!;
        const bw = reg[16 * i + 2]!;
        const bh = reg[16 * i + 3]!;
        if (!(bw > 0 && bh >= t.minFace)) continue;
        out.push({ score: Math.min(1, score), box: { x: r.x + (cx - bw / 2) * sx, y: r.y + (cy - bh / 2) * sy, width: bw * sx, height: bh * sy } });
      }
    }
  }
  return out;
}

/** Faces down to ~16 px high: FaceBoxes at several scales (+ optional BlazeFace tiles), merged. */
export class FaceDetector implements Detector {
  readonly name = "faces-faceboxes";
  readonly types: readonly ObjectType[] = ["face"];
  readonly options: Readonly<FaceOptions>;

  constructor(options: FaceOptionsInput = {}) {
    const o: FaceOptions = {
      ...FACE_DEFAULTS,
      ...options,
      blazeface: { ...FACE_DEFAULTS.blazeface, ...options.blazeface },
      fusion: { ...FACE_DEFAULTS.fusion, ...options.fusion, minSource: { ...FACE_DEFAULTS.fusion.minSource, ...options.fusion?.minSource } },
      verify: { ...FACE_DEFAULTS.verify, ...options.verify },
    };
    if (o.passes.length === 0 && o.blazeface.tile <= 0 && o.ssd.length === 0) throw new ObscuraError("INVALID_ARGUMENT", "face detector needs at least one FaceBoxes pass, SSD pass or BlazeFace tiles");
    if (!(o.fusion.reference > 0 && o.fusion.reference < 1)) throw new ObscuraError("INVALID_ARGUMENT", `face fusion.reference must be between 0 and 1 (exclusive), not ${o.fusion.reference}`);
    for (const p of o.ssd) {
      if (!(Number.isInteger(p.across) && p.across >= 1 && p.across <= 8)) throw new ObscuraError("INVALID_ARGUMENT", `face ssd pass "across" must be an integer from 1 to 8, not ${p.across}`);
    }
    for (const p of o.passes) {
      if (!(p.scale > 0 && p.scale <= 6)) throw new ObscuraError("INVALID_ARGUMENT", `face pass scale must be above 0 and at most 6, not ${p.scale}`);
    }
    this.options = o;
  }

  async detect(image: RgbImage, opts: DetectOptions): Promise<Detection[]> {
    checkImage(image);
    const o = this.options;
    const threshold = Math.max(0.01, opts.threshold);
    // The fused score the requested threshold stands for; each source takes part down to its own
    // floor, or lower when the request asks for less (a tracker extending tracks).
    const fusedMin = uncalibrate(threshold, o.fusion.reference);
    const floor = (m: number) => Math.min(m, fusedMin);
    const ms = o.fusion.minSource;
    const candidates: SourcedCandidate[] = [];
    for (const [i, p] of o.passes.entries()) for (const c of await faceboxesPass(image, p, o, floor(ms.faceboxes))) candidates.push({ ...c, source: `faceboxes@${p.scale}x#${i}` });
    if (o.blazeface.tile > 0) for (const c of await blazefaceTiles(image, o.blazeface, floor(ms.blazeface))) candidates.push({ ...c, source: "blazeface" });
    for (const [i, p] of o.ssd.entries()) for (const c of await ssdFaceCandidates(image, [p], floor(ms.ssd))) candidates.push({ ...c, source: `ssd/${p.across}#${i}` });
    const fusion: FusionOptions = { joinIou: o.fusion.joinIou, unionShare: o.fusion.unionShare, mergeIou: o.nmsIou, mergeContained: o.nmsContained };
    let kept = fuseFaces(candidates, fusedMin, fusion)
      .map((f) => ({ score: calibrate(f.score, o.fusion.reference), box: clip(f.box, image.width, image.height) }))
      .filter((c) => c.box.width >= 1 && c.box.height >= 1);
    const v = o.verify;
    if (v.minFace > 0) {
      const check = kept.filter((c) => c.box.height >= v.minFace && c.score < v.confident);
      const scores = await facemeshScores(image, check.map((c) => c.box), v);
      const drop = new Set(check.filter((_, i) => scores[i]! < v.minScore));
      kept = kept.filter((c) => !drop.has(c));
    }
    return kept.map((c) => ({ type: "face" as const, score: Math.min(1, Math.max(0, c.score)), box: c.box }));
  }
}
