/**
 * Redaction metrics for `npm run eval` (pure: boxes in, numbers out).
 *
 * Per image we get ground-truth boxes (`GtBox`, some flagged `ignore`) and detected boxes
 * (`Detection[]` or `Box[]`, already filtered to the object type under test). Definitions:
 *
 * - counted gt: a gt box that is not `ignore` and whose height is >= `minHeight` (default 10 px).
 *   Ignored boxes (e.g. WIDER `invalid = 1`) are never counted; boxes under `minHeight` are
 *   counted only in their own size bucket (`<10`), not in the overall recall.
 * - found: a gt box is found when ONE detected box covers at least `minCoverage` (default 0.7) of
 *   its area, `coverage(gt, det) >= 0.7` (lib/geometry). This is the redaction criterion: a box
 *   hides the face. There is no one-to-one matching: one large box may find several faces.
 * - recall = found counted gt / counted gt (null when there are none).
 * - recallBySize: the same per bucket of gt box HEIGHT in px: `>=40` (h >= 40), `20-40`
 *   (20 <= h < 40), `10-20` (10 <= h < 20), `<10` (h < 10). Non-ignored boxes only. With the
 *   default `minHeight` the first three buckets add up to the overall recall.
 * - meanIou: over every found non-ignored gt box (all sizes), the IoU with its best box, i.e. the
 *   highest IoU among the detected boxes that cover it >= `minCoverage` (null when none found).
 * - touching detection: a detected box whose intersection area with at least one gt box
 *   (ignored and tiny ones included) is > 0. Boxes that merely share an edge do not touch.
 * - precision = touching detections / all detections (null when there are no detections).
 *   Lenient on purpose: labels are not exhaustive and a redaction box near a face is harmless.
 * - false boxes: detections touching no gt box; falseBoxesPerImage = false boxes / images.
 * - boxesPerImage = detections / images.
 * - meanImageRecall: the mean of per-image recall over images with at least one counted gt
 *   (crowd images weigh as much as a single portrait); null when no image has one.
 *
 * `evaluateImage` returns additive counts; `addCounts` sums them; `summarize` turns them into the
 * ratios above, so a running recall can be printed while an evaluation progresses.
 */
import { coverage, intersection, iou, type Box } from "@/lib/geometry";
import type { Detection } from "@/server/vision/types";

export interface GtBox {
  box: Box;
  ignore?: boolean;
}

export const SIZE_BUCKETS = [">=40", "20-40", "10-20", "<10"] as const;
export type SizeBucket = (typeof SIZE_BUCKETS)[number];

export interface MetricOptions {
  /** Fraction of a gt box one detected box must cover for it to be found. Default 0.7. */
  minCoverage?: number;
  /** Gt boxes lower than this (px) are left out of the overall recall. Default 10. */
  minHeight?: number;
}

export interface BucketCounts {
  gt: number;
  found: number;
}

/** Additive counts for one image or a sum of images. */
export interface EvalCounts {
  images: number;
  /** Counted gt boxes (non-ignored, height >= minHeight) and how many were found. */
  gt: number;
  found: number;
  /** Gt boxes flagged ignore. */
  ignored: number;
  bySize: Record<SizeBucket, BucketCounts>;
  /** Sum and number of best IoUs of found non-ignored gt boxes (all sizes). */
  iouSum: number;
  iouCount: number;
  detections: number;
  touching: number;
  falseBoxes: number;
  /** Sum of per-image recall, and the number of images with at least one counted gt. */
  imageRecallSum: number;
  imagesWithGt: number;
}

export interface BucketMetrics extends BucketCounts {
  recall: number | null;
}

export interface EvalMetrics {
  images: number;
  gt: number;
  found: number;
  ignored: number;
  detections: number;
  recall: number | null;
  precision: number | null;
  recallBySize: Record<SizeBucket, BucketMetrics>;
  meanIou: number | null;
  falseBoxesPerImage: number | null;
  boxesPerImage: number | null;
  meanImageRecall: number | null;
}

export function sizeBucket(height: number): SizeBucket {
  if (height >= 40) return ">=40";
  if (height >= 20) return "20-40";
  if (height >= 10) return "10-20";
  return "<10";
}

export function emptyCounts(): EvalCounts {
  return {
    images: 0,
    gt: 0,
    found: 0,
    ignored: 0,
    bySize: { ">=40": { gt: 0, found: 0 }, "20-40": { gt: 0, found: 0 }, "10-20": { gt: 0, found: 0 }, "<10": { gt: 0, found: 0 } },
    iouSum: 0,
    iouCount: 0,
    detections: 0,
    touching: 0,
    falseBoxes: 0,
    imageRecallSum: 0,
    imagesWithGt: 0,
  };
}

function boxOf(d: Detection | Box): Box {
  return "box" in d ? d.box : d;
}

/** Whether `gt` is found by `dets`, and the best IoU among the boxes that find it. */
export function matchGt(gt: Box, dets: readonly Box[], minCoverage = 0.7): { found: boolean; iou: number } {
  let best = -1;
  for (const d of dets) {
    if (coverage(gt, d) >= minCoverage) best = Math.max(best, iou(gt, d));
  }
  return best >= 0 ? { found: true, iou: best } : { found: false, iou: 0 };
}

/** Counts for one image. */
export function evaluateImage(gts: readonly GtBox[], detections: readonly (Detection | Box)[], opts: MetricOptions = {}): EvalCounts {
  const minCoverage = opts.minCoverage ?? 0.7;
  const minHeight = opts.minHeight ?? 10;
  const dets = detections.map(boxOf);
  const c = emptyCounts();
  c.images = 1;
  for (const g of gts) {
    if (g.ignore) {
      c.ignored++;
      continue;
    }
    const m = matchGt(g.box, dets, minCoverage);
    const bucket = c.bySize[sizeBucket(g.box.height)];
    bucket.gt++;
    if (m.found) {
      bucket.found++;
      c.iouSum += m.iou;
      c.iouCount++;
    }
    if (g.box.height >= minHeight) {
      c.gt++;
      if (m.found) c.found++;
    }
  }
  c.detections = dets.length;
  for (const d of dets) {
    if (gts.some((g) => intersection(g.box, d) > 0)) c.touching++;
    else c.falseBoxes++;
  }
  if (c.gt > 0) {
    c.imagesWithGt = 1;
    c.imageRecallSum = c.found / c.gt;
  }
  return c;
}

/** a + b (new object). */
export function addCounts(a: EvalCounts, b: EvalCounts): EvalCounts {
  const out = emptyCounts();
  for (const k of ["images", "gt", "found", "ignored", "iouSum", "iouCount", "detections", "touching", "falseBoxes", "imageRecallSum", "imagesWithGt"] as const) {
    out[k] = a[k] + b[k];
  }
  for (const s of SIZE_BUCKETS) {
    out.bySize[s] = { gt: a.bySize[s].gt + b.bySize[s].gt, found: a.bySize[s].found + b.bySize[s].found };
  }
  return out;
}

const ratio = (n: number, d: number): number | null => (d > 0 ? n / d : null);

/** Ratios from summed counts. */
export function summarize(c: EvalCounts): EvalMetrics {
  const recallBySize = {} as Record<SizeBucket, BucketMetrics>;
  for (const s of SIZE_BUCKETS) recallBySize[s] = { ...c.bySize[s], recall: ratio(c.bySize[s].found, c.bySize[s].gt) };
  return {
    images: c.images,
    gt: c.gt,
    found: c.found,
    ignored: c.ignored,
    detections: c.detections,
    recall: ratio(c.found, c.gt),
    precision: ratio(c.touching, c.detections),
    recallBySize,
    meanIou: ratio(c.iouSum, c.iouCount),
    falseBoxesPerImage: ratio(c.falseBoxes, c.images),
    boxesPerImage: ratio(c.detections, c.images),
    meanImageRecall: ratio(c.imageRecallSum, c.imagesWithGt),
  };
}

/** Evaluates a whole set: one entry per image. */
export function evaluate(
  images: Iterable<{ gt: readonly GtBox[]; detections: readonly (Detection | Box)[] }>,
  opts: MetricOptions = {},
): EvalMetrics {
  let total = emptyCounts();
  for (const im of images) total = addCounts(total, evaluateImage(im.gt, im.detections, opts));
  return summarize(total);
}

/** Levenshtein distance of two strings (insertions, deletions, substitutions cost 1). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** Plate strings read against the labels: exact matches and character accuracy (1 - edits / label length, at least 0). */
export interface ReadingCounts {
  plates: number;
  exact: number;
  chars: number;
  charsRight: number;
}

export const emptyReading = (): ReadingCounts => ({ plates: 0, exact: 0, chars: 0, charsRight: 0 });

export function addReading(c: ReadingCounts, read: string, truth: string): ReadingCounts {
  return { plates: c.plates + 1, exact: c.exact + (read === truth ? 1 : 0), chars: c.chars + truth.length, charsRight: c.charsRight + Math.max(0, truth.length - editDistance(read, truth)) };
}

export function readingSummary(c: ReadingCounts): { plates: number; exactAccuracy: number | null; charAccuracy: number | null } {
  return { plates: c.plates, exactAccuracy: c.plates ? c.exact / c.plates : null, charAccuracy: c.chars ? c.charsRight / c.chars : null };
}
