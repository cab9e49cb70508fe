/** Fusion of face candidates from several sources: clustering, noisy-OR scores, union boxes, merge. */
import { describe, expect, it } from "vitest";
import { fuseCandidates, fuseFaces } from "@/server/vision/face-fusion";

const c = (source: string, x: number, y: number, w: number, h: number, score: number) => ({ source, score, box: { x, y, width: w, height: h } });

describe("face fusion", () => {
  it("agreeing sources raise the score (noisy-OR) and one source alone keeps its own", () => {
    const [a, b] = fuseCandidates([c("ssd", 10, 10, 20, 20, 0.5), c("fb", 11, 10, 20, 21, 0.5), c("ssd", 100, 100, 20, 20, 0.5)]).sort((p, q) => q.score - p.score);
    expect(a!.score).toBeCloseTo(0.75, 6);
    expect(a!.sources).toEqual({ ssd: 0.5, fb: 0.5 });
    expect(b!.score).toBeCloseTo(0.5, 6);
  });

  it("a source counts once per face (its best candidate), and weights scale it", () => {
    const [f] = fuseCandidates([c("ssd", 10, 10, 20, 20, 0.5), c("ssd", 11, 11, 20, 20, 0.4)]);
    expect(f!.score).toBeCloseTo(0.5, 6);
    const [g] = fuseCandidates([c("bz", 10, 10, 20, 20, 0.8)], { joinIou: 0.3, unionShare: 0.5, mergeIou: 0.4, mergeContained: 0.7, weights: { bz: 0.5 } });
    expect(g!.score).toBeCloseTo(0.4, 6);
  });

  it("the box is the union of the strong members only", () => {
    const [f] = fuseCandidates([c("ssd", 10, 10, 20, 20, 0.9), c("fb", 10, 12, 20, 24, 0.6), c("bz", 6, 6, 26, 26, 0.2)]);
    expect(f!.box).toEqual({ x: 10, y: 10, width: 20, height: 26 });
  });

  it("thresholds and merges what overlaps or lies inside a better face", () => {
    const out = fuseFaces([c("ssd", 10, 10, 40, 40, 0.9), c("fb", 20, 20, 10, 10, 0.8), c("ssd", 200, 10, 20, 20, 0.2), c("fb", 300, 10, 20, 20, 0.6)], 0.3);
    expect(out.map((f) => f.box.x)).toEqual([10, 300]);
  });
});
