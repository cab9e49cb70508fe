/**
 * Fusing face candidates from several detectors and scales (pure). Each source (a model at one
 * scale or tiling) reports candidates with its own probability; agreement between independent
 * sources is the strongest evidence a redaction pipeline has, so:
 *
 * 1. candidates of every source, best first, are gathered into clusters: a candidate joins the
 *    first cluster whose seed box it overlaps by more than `joinIou`, else it seeds a new one;
 * 2. a cluster's score is the noisy-OR of its sources' best scores (each scaled by the source's
 *    weight): 1 - prod(1 - w_s * p_s). Two sources at 0.5 give 0.75, one at 0.5 stays 0.5;
 * 3. a cluster's box is the union of its members scoring at least `unionShare` of its best
 *    member: the models disagree on extents (chin, forehead), and the union covers the face
 *    whichever is right — measured on faces-dev it finds more faces AND leaves fewer stray boxes
 *    than keeping the best member's box;
 * 4. clusters are thresholded and the survivors merged once more (IoU or containment).
 */
import { type Box, coverage, iou } from "@/lib/geometry";

export interface SourcedCandidate {
  source: string;
  box: Box;
  /** The source model's probability, 0..1. */
  score: number;
}

export interface FusionOptions {
  /** IoU with a cluster's seed above which a candidate joins it. */
  joinIou: number;
  /** Members at least this share of the cluster's best score make up its box. */
  unionShare: number;
  /** Weight of each source in the noisy-OR (missing: 1). */
  weights?: Readonly<Record<string, number>>;
  /** Final merge of thresholded clusters: IoU above this, or this share of a box inside a better one. */
  mergeIou: number;
  mergeContained: number;
}

export const FUSION_DEFAULTS: Readonly<FusionOptions> = { joinIou: 0.3, unionShare: 0.5, mergeIou: 0.4, mergeContained: 0.7 };

export interface FusedFace {
  box: Box;
  score: number;
  /** Best score per source that saw this face. */
  sources: Record<string, number>;
}

/** Clusters, scores and boxes (steps 1-3); not thresholded. */
export function fuseCandidates(candidates: readonly SourcedCandidate[], o: FusionOptions = FUSION_DEFAULTS): FusedFace[] {
  const sorted = [...candidates].sort((a, b) => b.score - a.score);
  const clusters: Array<{ seed: Box; members: SourcedCandidate[]; best: Record<string, number> }> = [];
  for (const c of sorted) {
    const k = clusters.find((cl) => iou(cl.seed, c.box) > o.joinIou);
    if (k) {
      k.members.push(c);
      k.best[c.source] = Math.max(k.best[c.source] ?? 0, c.score);
    } else clusters.push({ seed: c.box, members: [c], best: { [c.source]: c.score } });
  }
  return clusters.map((k) => {
    let miss = 1;
    for (const [s, p] of Object.entries(k.best)) miss *= 1 - Math.min(0.999, Math.max(0, p * (o.weights?.[s] ?? 1)));
    const top = k.members.filter((m) => m.score >= k.members[0]!.score * o.unionShare);
    const x0 = Math.min(...top.map((m) => m.box.x));
    const y0 = Math.min(...top.map((m) => m.box.y));
    const x1 = Math.max(...top.map((m) => m.box.x + m.box.width));
    const y1 = Math.max(...top.map((m) => m.box.y + m.box.height));
    return { box: { x: x0, y: y0, width: x1 - x0, height: y1 - y0 }, score: 1 - miss, sources: k.best };
  });
}

/** Fused faces scoring at least `threshold`, merged (step 4), best first. */
export function fuseFaces(candidates: readonly SourcedCandidate[], threshold: number, o: FusionOptions = FUSION_DEFAULTS): FusedFace[] {
  const kept: FusedFace[] = [];
  for (const f of fuseCandidates(candidates, o)
    .filter((f) => f.score >= threshold)
    .sort((a, b) => b.score - a.score)) {
    if (kept.some((k) => iou(k.box, f.box) > o.mergeIou || coverage(f.box, k.box) >= o.mergeContained)) continue;
    kept.push(f);
  }
  return kept;
}
