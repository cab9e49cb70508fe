/**
 * The leak check (docs/rendering.md#leak-check): after rendering, the output is scanned again by
 * the detectors of the requested features, and every object found outside the redacted regions
 * is reported as a possible leak, with where and when, so a reviewer can jump to it.
 *
 * - Frames: the rendered output decoded at the profile's detection stride (decodeFrames), every
 *   detector pass on each scanned frame (detectImage, as for a still image: not the video sweep
 *   schedule that produced the tracks, so what the sweep missed is looked at too).
 * - Scores, two thresholds per type (hysteresis, as the tracker's low/high stages):
 *   - a hit is kept at `seen` = max(LEAK_MIN_SCORE, LEAK_THRESHOLD_FACTOR x the request's
 *     threshold of its type) — half the request's threshold, but never inside the detectors'
 *     noise floor (measured: the face detector returns hundreds of boxes per 640x360 frame at
 *     0.05-0.09, a handful at 0.1-0.15);
 *   - a leak is reported when its best score reaches the request's threshold (a score that starts
 *     a track); its weaker hits extend it in time.
 * - Covered: a hit is inside a redacted region when at least LEAK_MAX_COVERAGE (0.5) of its box
 *   (the detector's tight box, not grown by faceBoxExpansionFactor) lies in the union of the boxes
 *   drawn on that frame (drawnBoxesAt: the renderer's own per-frame boxes, disabled tracks left
 *   out). OUTLINE draws no redaction, so its boxes cover nothing.
 * - Grouping: hits of one type on successive scanned frames (at most one scanned frame missed)
 *   whose boxes overlap (IoU >= LEAK_GROUP_IOU) are one leak: first/last frame and time where it
 *   was seen, and the frame, box and score of its best hit. Boxes are in the tracks' box space
 *   (detections.json pixels: the video's display size).
 * - Second opinion on weak faces: a face hit scored below LEAK_SURE_SCORE and at least
 *   LEAK_VERIFY_MIN_FACE px is shown to MediaPipe FaceMesh (face-verify.ts), whose face-presence
 *   output is 1.000 on the clip's real faces and 0.000 on the patch of dark background the face
 *   detector scores 0.15-0.29 there (and 0.000 on the redacted faces). A face leak none of whose
 *   hits reaches LEAK_SURE_SCORE or a presence of LEAK_FACE_CHECK is `dismissed`: listed apart,
 *   not counted. Smaller faces are never dismissed (FaceMesh cannot judge a few pixels).
 *
 * No database, no queue: the CLI (scripts/obscura.ts) calls the same functions.
 */
import { area, intersection, iou, type Box } from "@/lib/geometry";
import { DETECTION_FEATURES } from "@/lib/api/common";
import { decodeFrames, probe } from "../media";
import { drawnBoxesAt, objectStyle, type StyleConfig } from "../render";
import { PRIMARY_OBJECT_TYPES, trackingProfile, type Track } from "../tracking";
import { detectImage, featureSupport, type EngineSettings } from "../vision/engine";
import { facemeshScores } from "../vision/face-verify";
import type { ObjectType, RgbImage } from "../vision/types";

export const LEAKS_SCHEMA = "obscura.leaks/v1";
/** Hits are kept at this fraction of the request's threshold ... */
export const LEAK_THRESHOLD_FACTOR = 0.5;
/** ... but never below this score (the detectors' noise floor). */
export const LEAK_MIN_SCORE = 0.1;
/** A hit is a leak when less than this fraction of its box is redacted. */
export const LEAK_MAX_COVERAGE = 0.5;
/** Hits on successive scanned frames overlapping this much are one leak. */
export const LEAK_GROUP_IOU = 0.3;
/** A face hit scored at least this is a leak without a second opinion... */
export const LEAK_SURE_SCORE = 0.5;
/** ...a weaker one needs FaceMesh's face presence at least this on one of its hits... */
export const LEAK_FACE_CHECK = 0.5;
/** ...unless its box is smaller than this (long side, scanned-frame px): then it always counts. */
export const LEAK_VERIFY_MIN_FACE = 24;

export interface Thresholds {
  /** People and vehicles (objectsConfidenceThreshold). */
  objects: number;
  /** Everything else (innerObjectsConfidenceThreshold). */
  inner: number;
}

export interface Leak {
  id: number;
  type: ObjectType;
  label?: string;
  /** Scanned frames where it was first and last seen, and their times (seconds). */
  firstFrame: number;
  lastFrame: number;
  firstTime: number;
  lastTime: number;
  /** The best hit: its frame, time, box (box space) and score, and how much of it was redacted. */
  frame: number;
  time: number;
  box: Box;
  score: number;
  coverage: number;
  /** Scanned frames it was seen on. */
  hits: number;
  /** Faces given a second opinion: FaceMesh's best face presence over the hits (0..1). */
  faceCheck?: number;
}

export interface LeakReport {
  schema: typeof LEAKS_SCHEMA;
  checkedAt: string;
  /** Detection features scanned for, the detectors that ran, and those with no detector. */
  features: string[];
  detectors: string[];
  missingFeatures: string[];
  /** Hits kept at (`seen`) and leaks reported from (`report`, the request's thresholds). */
  threshold: { seen: Thresholds; report: Thresholds };
  maxCoverage: number;
  detectionStride: number;
  framesScanned: number;
  fps: number;
  /** Size the boxes are in (detections.json width/height; the image's size for images). */
  width: number;
  height: number;
  leaks: Leak[];
  /** Weak face hits FaceMesh saw no face in: not counted, kept for a reviewer who wants to look. */
  dismissed: Leak[];
}

/** The part of the report that goes into the operation's response and the manifest. */
export interface LeakSummary {
  leakCount: number;
  dismissedCount: number;
  framesScanned: number;
  threshold: { seen: Thresholds; report: Thresholds };
  features: string[];
}

export function leakSummary(r: LeakReport): LeakSummary {
  return { leakCount: r.leaks.length, dismissedCount: r.dismissed.length, framesScanned: r.framesScanned, threshold: r.threshold, features: r.features };
}

/**
 * Whether to run the leak check: the request's switch (absent: on), unless OBSCURA_LEAK_CHECK is
 * 0/false/off/no (server-wide off).
 */
export function leakCheckEnabled(requested: boolean | undefined): boolean {
  const env = process.env.OBSCURA_LEAK_CHECK;
  if (env !== undefined && /^(0|false|off|no)$/i.test(env.trim())) return false;
  return requested !== false;
}

/** The detection features a leak check scans for: the request's, else those the session was searched for. */
export function leakFeatures(requested: readonly string[], session: readonly string[]): string[] {
  const isDetection = (f: string) => (DETECTION_FEATURES as readonly string[]).includes(f);
  const own = requested.filter(isDetection);
  return [...new Set(own.length ? own : session.filter(isDetection))];
}

export function leakThresholds(settings: Pick<EngineSettings, "objectsConfidenceThreshold" | "innerObjectsConfidenceThreshold">): { seen: Thresholds; report: Thresholds } {
  const seen = (t: number) => Math.min(t, Math.max(LEAK_MIN_SCORE, LEAK_THRESHOLD_FACTOR * t));
  const report = { objects: settings.objectsConfidenceThreshold, inner: settings.innerObjectsConfidenceThreshold };
  return { seen: { objects: seen(report.objects), inner: seen(report.inner) }, report };
}

const forType = (t: Thresholds, type: ObjectType) => (PRIMARY_OBJECT_TYPES.includes(type) ? t.objects : t.inner);

/** Fraction of `target` inside the union of `covers` (exact, by cutting the target at every edge). */
export function unionCoverage(target: Box, covers: readonly Box[]): number {
  const a = area(target);
  if (!(a > 0)) return 0;
  const hits = covers.filter((c) => intersection(target, c) > 0);
  if (!hits.length) return 0;
  if (hits.length === 1) return intersection(target, hits[0]!) / a;
  const x0 = target.x;
  const y0 = target.y;
  const x1 = target.x + target.width;
  const y1 = target.y + target.height;
  const cut = (lo: number, hi: number, edges: number[]) => [...new Set([lo, hi, ...edges.filter((e) => e > lo && e < hi)])].sort((p, q) => p - q);
  const xs = cut(x0, x1, hits.flatMap((c) => [c.x, c.x + c.width]));
  const ys = cut(y0, y1, hits.flatMap((c) => [c.y, c.y + c.height]));
  let covered = 0;
  for (let i = 0; i + 1 < xs.length; i++) {
    const cx = (xs[i]! + xs[i + 1]!) / 2;
    for (let j = 0; j + 1 < ys.length; j++) {
      const cy = (ys[j]! + ys[j + 1]!) / 2;
      if (hits.some((c) => cx >= c.x && cx <= c.x + c.width && cy >= c.y && cy <= c.y + c.height)) covered += (xs[i + 1]! - xs[i]!) * (ys[j + 1]! - ys[j]!);
    }
  }
  return covered / a;
}

export interface LeakHit {
  frame: number;
  type: ObjectType;
  label?: string;
  box: Box;
  score: number;
  coverage: number;
  /** FaceMesh face presence, for weak face hits big enough to judge. */
  faceCheck?: number;
}

const round1 = (v: number) => Math.round(v * 10) / 10;
const roundBox = (b: Box): Box => ({ x: round1(b.x), y: round1(b.y), width: round1(b.width), height: round1(b.height) });

/**
 * Joins uncovered hits (in frame order) into leaks: a hit continues the open leak of its type
 * whose last hit was on one of the previous two scanned frames and overlaps it best (IoU >=
 * LEAK_GROUP_IOU); leaks whose best score is below the report threshold of their type are dropped,
 * weak faces FaceMesh saw no face in are `dismissed`.
 */
export function groupLeaks(hits: readonly LeakHit[], opts: { stride: number; fps: number; report: Thresholds }): { leaks: Leak[]; dismissed: Leak[] } {
  interface Group { type: ObjectType; label?: string; first: number; last: number; lastBox: Box; best: LeakHit; hits: number; faceCheck?: number; unchecked: boolean }
  const groups: Group[] = [];
  const byFrame = new Map<number, LeakHit[]>();
  for (const h of hits) byFrame.set(h.frame, [...(byFrame.get(h.frame) ?? []), h]);
  const gap = 2 * Math.max(1, opts.stride);
  for (const frame of [...byFrame.keys()].sort((a, b) => a - b)) {
    const used = new Set<Group>();
    for (const h of [...byFrame.get(frame)!].sort((a, b) => b.score - a.score)) {
      let best: Group | null = null;
      let bestIou = LEAK_GROUP_IOU;
      for (const g of groups) {
        if (used.has(g) || g.type !== h.type || g.last < frame - gap || g.last >= frame) continue;
        const o = iou(g.lastBox, h.box);
        if (o >= bestIou) {
          best = g;
          bestIou = o;
        }
      }
      if (best) {
        best.last = frame;
        best.lastBox = h.box;
        best.hits++;
        if (h.score > best.best.score) best.best = h;
      } else {
        best = { type: h.type, label: h.label, first: frame, last: frame, lastBox: h.box, best: h, hits: 1, unchecked: false };
        groups.push(best);
      }
      if (h.faceCheck === undefined) best.unchecked = true;
      else best.faceCheck = Math.max(best.faceCheck ?? 0, h.faceCheck);
      used.add(best);
    }
  }
  const fps = opts.fps > 0 ? opts.fps : 25;
  const t = (f: number) => +(f / fps).toFixed(3);
  const dismissedGroup = (g: Group) =>
    g.type === "face" && !g.unchecked && g.best.score < LEAK_SURE_SCORE && (g.faceCheck ?? 0) < LEAK_FACE_CHECK;
  const reported = groups
    .filter((g) => g.best.score >= forType(opts.report, g.type))
    .sort((a, b) => a.first - b.first || a.best.box.x - b.best.box.x);
  const present = (list: Group[]): Leak[] =>
    list.map((g, i) => ({
      id: i + 1,
      type: g.type,
      ...(g.label ? { label: g.label } : {}),
      firstFrame: g.first,
      lastFrame: g.last,
      firstTime: t(g.first),
      lastTime: t(g.last),
      frame: g.best.frame,
      time: t(g.best.frame),
      box: roundBox(g.best.box),
      score: Math.round(g.best.score * 1e4) / 1e4,
      coverage: Math.round(g.best.coverage * 1000) / 1000,
      hits: g.hits,
      ...(g.faceCheck !== undefined ? { faceCheck: Math.round(g.faceCheck * 1000) / 1000 } : {}),
    }));
  return { leaks: present(reported.filter((g) => !dismissedGroup(g))), dismissed: present(reported.filter(dismissedGroup)) };
}

/** The hits of one scanned image outside the redacted boxes (boxes in the same pixels). */
async function scanImage(
  image: RgbImage,
  features: readonly string[],
  seen: Thresholds,
  redacted: readonly Box[],
  toBoxSpace: (b: Box) => Box,
  frame: number,
): Promise<LeakHit[]> {
  const found = await detectImage(image, features, { objectsConfidenceThreshold: seen.objects, innerObjectsConfidenceThreshold: seen.inner, faceBoxExpansionFactor: 1 });
  const out: LeakHit[] = [];
  const toCheck: { hit: LeakHit; box: Box }[] = [];
  for (const d of found) {
    const box = toBoxSpace(d.box);
    const coverage = unionCoverage(box, redacted);
    if (coverage >= LEAK_MAX_COVERAGE) continue;
    const hit: LeakHit = { frame, type: d.type, ...(d.label ? { label: d.label } : {}), box, score: d.score, coverage };
    out.push(hit);
    if (d.type === "face" && d.score < LEAK_SURE_SCORE && Math.max(d.box.width, d.box.height) >= LEAK_VERIFY_MIN_FACE) toCheck.push({ hit, box: d.box });
  }
  if (toCheck.length) {
    const presence = await facemeshScores(image, toCheck.map((c) => c.box), { cropFactor: 1.5, batch: 16 });
    toCheck.forEach((c, i) => (c.hit.faceCheck = presence[i]!));
  }
  return out;
}

/** Boxes that hide pixels under a style (OUTLINE leaves the content visible). */
const redacting = (style: StyleConfig) => (o: { type: ObjectType; box: Box }) => objectStyle(style, o.type).style !== "OUTLINE";

export interface VideoLeakOptions {
  /** The session's tracks as rendered, in `boxSpace` pixels. */
  tracks: readonly Track[];
  boxSpace: { width: number; height: number };
  /** The source's frame rate (frame n of the output is frame n of the tracks). */
  fps: number;
  style: StyleConfig;
  features: readonly string[];
  /** The request's thresholds and profile. */
  settings: Pick<EngineSettings, "objectsConfidenceThreshold" | "innerObjectsConfidenceThreshold"> & { profileName: string };
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

export async function checkVideoLeaks(rendered: string, opts: VideoLeakOptions): Promise<LeakReport> {
  const support = featureSupport(opts.features);
  const info = await probe(rendered, { signal: opts.signal });
  const fps = opts.fps > 0 ? opts.fps : info.video.fps > 0 ? info.video.fps : 25;
  const stride = trackingProfile(opts.settings.profileName, fps).detectionStride;
  const threshold = leakThresholds(opts.settings);
  const sx = opts.boxSpace.width > 0 ? opts.boxSpace.width / info.video.displayWidth : 1;
  const sy = opts.boxSpace.height > 0 ? opts.boxSpace.height / info.video.displayHeight : 1;
  const frameCount = Math.max(1, info.video.frameCount);
  const isRedacting = redacting(opts.style);
  const hits: LeakHit[] = [];
  let framesScanned = 0;
  if (support.supported.length) {
    const maxSide = Number(process.env.OBSCURA_DETECT_MAX_SIDE) || 1920;
    for await (const f of decodeFrames(rendered, info, { stride, maxSide, signal: opts.signal })) {
      const redacted = drawnBoxesAt(opts.tracks, f.index).filter(isRedacting).map((b) => b.box);
      const k = f.scale;
      const toBoxSpace = (b: Box): Box => ({ x: b.x * k * sx, y: b.y * k * sy, width: b.width * k * sx, height: b.height * k * sy });
      hits.push(...(await scanImage(f.image, support.supported, threshold.seen, redacted, toBoxSpace, f.index)));
      framesScanned++;
      opts.onProgress?.(Math.min(0.99, (f.index + 1) / frameCount));
    }
  }
  opts.onProgress?.(1);
  return leakReport(support, threshold, hits, {
    detectionStride: stride,
    framesScanned,
    fps,
    width: opts.boxSpace.width || info.video.displayWidth,
    height: opts.boxSpace.height || info.video.displayHeight,
  });
}

/** The leak check of a rendered image: `rendered` is the output as written (JPG decoded), `drawn` what was redacted on it. */
export async function checkImageLeaks(
  rendered: RgbImage,
  drawn: readonly { type: ObjectType; box: Box }[],
  opts: { features: readonly string[]; settings: Pick<EngineSettings, "objectsConfidenceThreshold" | "innerObjectsConfidenceThreshold">; style: StyleConfig },
): Promise<LeakReport> {
  const support = featureSupport(opts.features);
  const threshold = leakThresholds(opts.settings);
  const redacted = drawn.filter(redacting(opts.style)).map((d) => d.box);
  const hits = support.supported.length ? await scanImage(rendered, support.supported, threshold.seen, redacted, (b) => b, 0) : [];
  return leakReport(support, threshold, hits, {
    detectionStride: 1,
    framesScanned: support.supported.length ? 1 : 0,
    fps: 0,
    width: rendered.width,
    height: rendered.height,
  });
}

/** The report of a scan: what ran, how, and the hits grouped into leaks. */
function leakReport(
  support: ReturnType<typeof featureSupport>,
  threshold: LeakReport["threshold"],
  hits: readonly LeakHit[],
  scan: Pick<LeakReport, "detectionStride" | "framesScanned" | "fps" | "width" | "height">,
): LeakReport {
  return {
    schema: LEAKS_SCHEMA,
    checkedAt: new Date().toISOString(),
    features: [...support.supported],
    detectors: support.detectors,
    missingFeatures: support.missing,
    threshold,
    maxCoverage: LEAK_MAX_COVERAGE,
    ...scan,
    ...groupLeaks(hits, { stride: Math.max(1, scan.detectionStride), fps: scan.fps || 1, report: threshold.report }),
  };
}
