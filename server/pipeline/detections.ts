/**
 * Views of a session's tracks that need no media code: the per-frame objects.jsonl and counts per
 * type. Kept apart from the pipeline so the session API (server/sessions) bundles light.
 */
import { trackBoxesByFrame } from "../tracking";
import type { DetectionsFile } from "./state";

const round = (v: number) => Math.round(v * 10) / 10;

/** Tracks per object type, for session lists. */
export function trackCounts(tracks: readonly { type: string }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of tracks) out[t.type] = (out[t.type] ?? 0) + 1;
  return out;
}

/** One JSON line per frame that has objects: the per-frame view of the tracks. */
export function objectsJsonl(d: DetectionsFile): string {
  const fps = d.fps > 0 ? d.fps : 25;
  const scores = new Map<string, number | null>();
  for (const t of d.tracks) for (const k of t.keyframes) scores.set(`${t.id}:${k.frame}`, k.score);
  const lines: string[] = [];
  for (const { frame, boxes } of trackBoxesByFrame(d.tracks, d.frameCount)) {
    if (!boxes.length) continue;
    const objects = boxes.map((b) => ({
      trackId: b.trackId,
      type: b.type,
      score: scores.get(`${b.trackId}:${frame}`) ?? null,
      boundingBox: { x: round(b.box.x), y: round(b.box.y), width: round(b.box.width), height: round(b.box.height) },
    }));
    lines.push(JSON.stringify({ frame, time: +(frame / fps).toFixed(4), objects }));
  }
  return lines.length ? lines.join("\n") + "\n" : "";
}
