/**
 * Licence plates from PaddleOCR's text detector ("plates-ppocr"). There is no plate model in the
 * npm packages we may ship, but the PP-OCRv4 text detector finds plate characters reliably; a plate
 * is then the characters' line grown to the plate's outline, kept when it has a plate's shape.
 *
 *   text lines (text-detect.ts)
 *   -> fragments of one line joined (a plate's characters often come out as 2-3 pieces around a
 *      dash, a sticker or a screw), the pieces kept as candidates too
 *   -> each candidate grown about its centre, along its own axes: `lengthFactor` along the text,
 *      `heightFactor` across it (the characters fill ~85% of a plate's width, ~55% of its height)
 *   -> shape filter: text-line aspect (length / height), tilt, minimum line height in pixels,
 *      maximum size relative to the image, and not part of a stack of 3+ similar lines
 *      (paragraph text on signs and documents)
 *   -> suppression: best first, a candidate is dropped when it overlaps a kept one (IoU) or lies
 *      mostly inside it (a redaction box inside another hides nothing more).
 *
 * Scores are the text detector's mean probability over the line (0..1).
 * Measured on data/plates-us (222 images) by bench/plates-check.ts, found = a box covers >= 70%
 * of the plate: scale 1 (max side 1280) recall 0.986, 1.97 boxes/image; scale 1.5 0.995, 2.14;
 * scale 2 1.000, 2.27 (about 4x the time of scale 1). Growing text lines alone: 0.982, 4.54.
 */
import { type Box, clip, coverage, iou } from "@/lib/geometry";
import { ObscuraError } from "@/lib/errors";
import { detectTextInRegion, detectTextShared, type Point, type Region, type TextBox, type TextDetectOptions } from "./text-detect";
import type { DetectOptions, Detection, Detector, ObjectType, RgbImage } from "./types";

export interface PlateOptions {
  /** Upscale the image this much before text detection (2 finds smaller plates, ~4x the time). */
  scale: number;
  /** Longest side fed to the text detector; default 1280 x scale. */
  maxSide?: number;
  /** Text lines with a lower mean probability are ignored. */
  lineThreshold: number;
  /** Growth of a text line to the plate's outline, along the text and across it. */
  lengthFactor: number;
  heightFactor: number;
  /** Text-line aspect (length / height of the detector's unclipped line) allowed for a plate. */
  minAspect: number;
  maxAspect: number;
  /** Lines tilted more than this many degrees are not plates. */
  maxTiltDegrees: number;
  /** Lines (unclipped) lower than this many image pixels are not plates. */
  minLineHeight: number;
  /** A plate box is at most this fraction of the image's width and height. */
  maxWidthFraction: number;
  maxHeightFraction: number;
  /**
   * A stack of more than this many lines of similar height, each directly above the next, is
   * paragraph text (signs, documents), not a plate; 2 keeps two-row plates. 0 turns the check off.
   */
  maxStackedLines: number;
  /** Fragments of one line are joined when the gap between them is at most this x line height. */
  joinGap: number;
  /** Suppression: drop a candidate whose IoU with a kept one exceeds this... */
  nmsIou: number;
  /** ...or of which this fraction lies inside a kept one. */
  nmsContained: number;
}

export const PLATE_DEFAULTS: Readonly<PlateOptions> = {
  scale: 1,
  lineThreshold: 0.3,
  lengthFactor: 1.15,
  heightFactor: 1.8,
  minAspect: 1.5,
  maxAspect: 6,
  maxTiltDegrees: 30,
  minLineHeight: 12,
  maxWidthFraction: 0.6,
  maxHeightFraction: 0.5,
  maxStackedLines: 2,
  joinGap: 1.0,
  nmsIou: 0.3,
  nmsContained: 0.8,
};

/** A text line (or several joined) as a centre and two half-axis vectors: `u` along, `v` across. */
interface Line {
  cx: number;
  cy: number;
  ux: number;
  uy: number;
  vx: number;
  vy: number;
  length: number;
  height: number;
  tilt: number;
  bounds: Box;
  score: number;
}

function lineOf(t: TextBox): Line {
  const [p0, p1, , p3] = t.quad;
  const ux = (p1[0] - p0[0]) / 2;
  const uy = (p1[1] - p0[1]) / 2;
  const vx = (p3[0] - p0[0]) / 2;
  const vy = (p3[1] - p0[1]) / 2;
  const cx = t.quad.reduce((s, p) => s + p[0], 0) / 4;
  const cy = t.quad.reduce((s, p) => s + p[1], 0) / 4;
  let tilt = (Math.atan2(uy, ux) * 180) / Math.PI;
  if (tilt > 90) tilt -= 180;
  if (tilt <= -90) tilt += 180;
  return { cx, cy, ux, uy, vx, vy, length: 2 * Math.hypot(ux, uy), height: 2 * Math.hypot(vx, vy), tilt, bounds: unclipped(t.quad), score: t.score };
}

function unclipped(quad: readonly Point[]): Box {
  const xs = quad.map((p) => p[0]);
  const ys = quad.map((p) => p[1]);
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

function axisLine(b: Box, score: number): Line {
  return {
    cx: b.x + b.width / 2,
    cy: b.y + b.height / 2,
    ux: b.width / 2,
    uy: 0,
    vx: 0,
    vy: b.height / 2,
    length: b.width,
    height: b.height,
    tilt: 0,
    bounds: b,
    score,
  };
}

/** Fragments on one line (similar height, overlapping vertically, close horizontally), joined. */
function joinFragments(lines: Line[], o: PlateOptions): Line[] {
  const n = lines.length;
  const parent = Array.from({ length: n }, (_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (let i = 0; i < n; i++) {
    const a = lines[i];
    if (Math.abs(a.tilt) > o.maxTiltDegrees) continue;
    for (let j = i + 1; j < n; j++) {
      const b = lines[j];
      if (Math.abs(b.tilt) > o.maxTiltDegrees) continue;
      if (Math.max(a.height, b.height) / Math.min(a.height, b.height) > 1.8) continue;
      const A = a.bounds;
      const B = b.bounds;
      const vOverlap = Math.min(A.y + A.height, B.y + B.height) - Math.max(A.y, B.y);
      if (vOverlap < 0.5 * Math.min(A.height, B.height)) continue;
      const gap = Math.max(A.x, B.x) - Math.min(A.x + A.width, B.x + B.width);
      if (gap > o.joinGap * Math.max(a.height, b.height)) continue;
      parent[find(i)] = find(j);
    }
  }
  const groups = new Map<number, Line[]>();
  lines.forEach((l, i) => {
    const r = find(i);
    const g = groups.get(r);
    if (g) g.push(l);
    else groups.set(r, [l]);
  });
  const joined: Line[] = [];
  for (const g of groups.values()) {
    if (g.length < 2) continue;
    const x0 = Math.min(...g.map((l) => l.bounds.x));
    const y0 = Math.min(...g.map((l) => l.bounds.y));
    const x1 = Math.max(...g.map((l) => l.bounds.x + l.bounds.width));
    const y1 = Math.max(...g.map((l) => l.bounds.y + l.bounds.height));
    joined.push(axisLine({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 }, Math.max(...g.map((l) => l.score))));
  }
  return joined;
}

/** Two lines of similar height, one directly above the other, overlapping horizontally. */
function stacked(l: Line, m: Line): boolean {
  const r = m.height / l.height;
  if (r < 0.8 || r > 1.25) return false;
  const dy = Math.abs(m.cy - l.cy);
  if (dy > 1.4 * Math.max(l.height, m.height) || dy < 0.5 * Math.min(l.height, m.height)) return false;
  const A = l.bounds;
  const B = m.bounds;
  const hOverlap = Math.min(A.x + A.width, B.x + B.width) - Math.max(A.x, B.x);
  return hOverlap >= 0.5 * Math.min(A.width, B.width);
}

/** For each line, how many lines its stack of similar lines (see `stacked`) holds, itself included. */
function stackSizes(lines: readonly Line[]): number[] {
  const n = lines.length;
  const stack = Array.from({ length: n }, (_, i) => i);
  const find = (i: number): number => {
    while (stack[i] !== i) i = stack[i] = stack[stack[i]];
    return i;
  };
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (stacked(lines[i], lines[j])) stack[find(i)] = find(j);
  const size = new Map<number, number>();
  for (let i = 0; i < n; i++) size.set(find(i), (size.get(find(i)) ?? 0) + 1);
  return lines.map((_, i) => size.get(find(i))!);
}

function grow(l: Line, o: PlateOptions, width: number, height: number): Box {
  const a = o.lengthFactor;
  const b = o.heightFactor;
  const ex = Math.abs(a * l.ux) + Math.abs(b * l.vx);
  const ey = Math.abs(a * l.uy) + Math.abs(b * l.vy);
  return clip({ x: l.cx - ex, y: l.cy - ey, width: 2 * ex, height: 2 * ey }, width, height);
}

/**
 * Text lines of one `width` x `height` image -> plate detections, best first (pure).
 * `threshold` drops candidates scoring below it before suppression.
 */
export function platesFromText(lines: readonly TextBox[], width: number, height: number, options: Partial<PlateOptions> = {}, threshold = 0): Detection[] {
  const o: PlateOptions = { ...PLATE_DEFAULTS, ...options };
  const base = lines.filter((t) => t.score >= o.lineThreshold).map(lineOf);
  const joined = joinFragments(base, o);
  const candidates = base.concat(joined);
  // Paragraph text: lines in a stack of more than maxStackedLines similar lines.
  const sizes = o.maxStackedLines > 0 ? stackSizes(base) : [];
  const paragraph = new Set(base.filter((_, i) => sizes[i] > o.maxStackedLines));
  const kept: Array<{ box: Box; score: number }> = [];
  for (const l of candidates) {
    if (l.score < threshold) continue;
    const aspect = l.length / Math.max(l.height, 1e-6);
    if (aspect < o.minAspect || aspect > o.maxAspect) continue;
    if (Math.abs(l.tilt) > o.maxTiltDegrees || l.height < o.minLineHeight) continue;
    if (paragraph.has(l)) continue;
    const box = grow(l, o, width, height);
    if (box.width <= 0 || box.height <= 0) continue;
    if (box.width > o.maxWidthFraction * width || box.height > o.maxHeightFraction * height) continue;
    kept.push({ box, score: l.score });
  }
  kept.sort((a, b) => b.score - a.score || b.box.width * b.box.height - a.box.width * a.box.height);
  const out: Detection[] = [];
  for (const c of kept) {
    if (out.some((k) => iou(k.box, c.box) > o.nmsIou || coverage(c.box, k.box) >= o.nmsContained)) continue;
    out.push({ type: "licensePlate", score: Math.min(1, Math.max(0, c.score)), box: c.box });
  }
  return out;
}

/** The plate detector on PP-OCRv4 text detection. */
export class PlateDetector implements Detector {
  readonly name = "plates-ppocr";
  readonly types: readonly ObjectType[] = ["licensePlate"];
  readonly options: Readonly<PlateOptions>;

  constructor(options: Partial<PlateOptions> = {}) {
    const o = { ...PLATE_DEFAULTS, ...options };
    if (!(o.scale > 0 && o.scale <= 4)) throw new ObscuraError("INVALID_ARGUMENT", `plate detector scale must be above 0 and at most 4, not ${o.scale}`);
    if (!(o.minAspect > 0 && o.maxAspect >= o.minAspect)) {
      throw new ObscuraError("INVALID_ARGUMENT", `plate aspect range must satisfy 0 < minAspect <= maxAspect, not ${o.minAspect}..${o.maxAspect}`);
    }
    this.options = o;
  }

  /** Settings passed to the text detector. */
  textOptions(): TextDetectOptions {
    const o = this.options;
    return { scale: o.scale, maxSide: o.maxSide ?? Math.round(1280 * o.scale), boxThreshold: o.lineThreshold };
  }

  async detect(image: RgbImage, opts: DetectOptions): Promise<Detection[]> {
    const lines = await detectTextShared(image, this.textOptions());
    return platesFromText(lines, image.width, image.height, this.options, opts.threshold);
  }

  /**
   * Plates inside some regions of the image only (vehicles, the neighbourhood of a plate being
   * tracked, one band of a frame), in image pixels. The text detector runs on each region at a
   * resolution fitting it (`regionTextOptions`); the lines of all regions then go through the same
   * plate step as a whole image (shape filters and limits relative to the whole image, one
   * suppression across regions, so a plate seen by two overlapping regions is one box).
   */
  async detectInRegions(image: RgbImage, regions: readonly Region[], opts: DetectOptions): Promise<Detection[]> {
    const lines: TextBox[] = [];
    for (const r of regions) {
      if (r.width < 8 || r.height < 8) continue;
      lines.push(...(await detectTextInRegion(image, r, this.regionTextOptions(r))));
    }
    return platesFromText(lines, image.width, image.height, this.options, opts.threshold);
  }

  /**
   * Text detector settings for a region: its own pixels at the detector's scale, small regions (a
   * distant car) scaled up so their longer side reaches `REGION_MIN_SIDE` (at most 2x), which
   * makes their plates' characters big enough for the text model.
   */
  regionTextOptions(r: Region): TextDetectOptions {
    const o = this.options;
    const longest = Math.max(r.width, r.height);
    const scale = Math.min(Math.max(2, o.scale), Math.max(o.scale, REGION_MIN_SIDE / longest));
    return { scale, maxSide: o.maxSide ?? Math.round(1280 * o.scale), boxThreshold: o.lineThreshold };
  }
}

/** Regions smaller than this (longer side, pixels) are scaled up for text detection (at most 2x). */
export const REGION_MIN_SIDE = 480;
