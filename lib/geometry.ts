/**
 * Boxes in pixels (x, y = top-left corner), and the pure operations every detector, the tracker
 * and the renderer share: IoU, coverage, non-maximum suppression, scaling about the centre, clipping.
 */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function area(b: Box): number {
  return Math.max(0, b.width) * Math.max(0, b.height);
}

export function intersection(a: Box, b: Box): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

export function iou(a: Box, b: Box): number {
  const i = intersection(a, b);
  const u = area(a) + area(b) - i;
  return u > 0 ? i / u : 0;
}

/** Fraction of `target` covered by `cover` (0..1): how much of a face a redaction box hides. */
export function coverage(target: Box, cover: Box): number {
  const a = area(target);
  return a > 0 ? intersection(target, cover) / a : 0;
}

/** Scales a box about its centre by `factor` (faceBoxExpansionFactor), optionally per axis. */
export function expand(b: Box, factor: number, factorY = factor): Box {
  const w = b.width * factor;
  const h = b.height * factorY;
  return { x: b.x + b.width / 2 - w / 2, y: b.y + b.height / 2 - h / 2, width: w, height: h };
}

/** Clips a box to an image of `width` x `height`; may return an empty box. */
export function clip(b: Box, width: number, height: number): Box {
  const x0 = Math.max(0, Math.min(width, b.x));
  const y0 = Math.max(0, Math.min(height, b.y));
  const x1 = Math.max(0, Math.min(width, b.x + b.width));
  const y1 = Math.max(0, Math.min(height, b.y + b.height));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/**
 * Greedy non-maximum suppression: keeps the highest-scoring item, drops every other whose IoU with
 * a kept one exceeds `threshold`. Returns kept items, best first. O(n log n + n*k).
 */
export function nms<T extends { box: Box; score: number }>(items: readonly T[], threshold: number): T[] {
  const sorted = [...items].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  for (const it of sorted) {
    if (kept.every((k) => iou(k.box, it.box) <= threshold)) kept.push(it);
  }
  return kept;
}
