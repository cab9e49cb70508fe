/**
 * The review editor's track model, as pure functions (unit-tested in test/editor-model.test.ts):
 * the box of a track at any frame (linear interpolation between keyframes, as the renderer does),
 * and every edit the editor makes. Each edit returns new track objects and leaves the old ones
 * untouched, so undo is a matter of keeping the previous arrays (structural sharing: an edit of one
 * track out of 2,000 copies one track and the array of references).
 */
import type { EditorBox as Box, EditorKeyframe as Keyframe, EditorTrack as Track } from "../api/session";

export type { Box, Keyframe, Track };

/** Index of the last keyframe at or before `frame` (-1 when all are after). */
export function keyframeIndexAtOrBefore(keyframes: readonly Keyframe[], frame: number): number {
  let lo = 0;
  let hi = keyframes.length - 1;
  let ans = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (keyframes[mid]!.frame <= frame) {
      ans = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return ans;
}

const lerp = (a: number, b: number, t: number) => a + (b - a) * t;

/** The track's box at `frame`, or null outside firstFrame..lastFrame. Before the first / after the last keyframe the nearest keyframe's box holds. */
export function boxAt(track: Track, frame: number): Box | null {
  if (frame < track.firstFrame || frame > track.lastFrame) return null;
  const k = track.keyframes;
  const i = keyframeIndexAtOrBefore(k, frame);
  if (i < 0) return k[0]!.box;
  const a = k[i]!;
  const b = k[i + 1];
  if (!b || a.frame === frame) return a.box;
  const t = (frame - a.frame) / (b.frame - a.frame);
  return { x: lerp(a.box.x, b.box.x, t), y: lerp(a.box.y, b.box.y, t), width: lerp(a.box.width, b.box.width, t), height: lerp(a.box.height, b.box.height, t) };
}

/** The detector's score at `frame` when a keyframe sits there, else the nearest earlier keyframe's. */
export function scoreAt(track: Track, frame: number): number | null {
  const i = keyframeIndexAtOrBefore(track.keyframes, frame);
  return track.keyframes[Math.max(0, i)]!.score;
}

/** The highest detector score of the track (null for drawn tracks). */
export function trackScore(track: Track): number | null {
  let best: number | null = null;
  for (const k of track.keyframes) if (k.score != null && k.source !== "manual" && (best == null || k.score > best)) best = k.score;
  return best;
}

export const isEnabled = (t: Track) => t.enabled !== false;

/** Tracks that have a box at `frame`. */
export function activeAt(tracks: readonly Track[], frame: number): Track[] {
  const out: Track[] = [];
  for (const t of tracks) if (frame >= t.firstFrame && frame <= t.lastFrame) out.push(t);
  return out;
}

const roundBox = (b: Box): Box => ({ x: round2(b.x), y: round2(b.y), width: Math.max(1, round2(b.width)), height: Math.max(1, round2(b.height)) });
const round2 = (v: number) => Math.round(v * 100) / 100;

/** Keeps a box inside the frame (at least partly: a box may not leave the picture entirely). */
export function clampBox(b: Box, width: number, height: number): Box {
  const w = Math.min(Math.max(1, b.width), width);
  const h = Math.min(Math.max(1, b.height), height);
  return roundBox({ x: Math.min(Math.max(0, b.x), width - w), y: Math.min(Math.max(0, b.y), height - h), width: w, height: h });
}

/**
 * Sets the track's box at `frame` as a manual keyframe (moving, resizing or K on a tracked object):
 * frames between keyframes follow by interpolation. A frame outside the track extends it.
 */
export function setKeyframe(track: Track, frame: number, box: Box): Track {
  const kf: Keyframe = { frame, box: roundBox(box), score: null, source: "manual" };
  const k = track.keyframes;
  const i = keyframeIndexAtOrBefore(k, frame);
  const keyframes = i >= 0 && k[i]!.frame === frame ? [...k.slice(0, i), kf, ...k.slice(i + 1)] : [...k.slice(0, i + 1), kf, ...k.slice(i + 1)];
  return { ...track, keyframes, firstFrame: Math.min(track.firstFrame, frame), lastFrame: Math.max(track.lastFrame, frame), reviewed: true };
}

/** Removes the keyframe at `frame` (not the track's only one). */
export function removeKeyframe(track: Track, frame: number): Track {
  if (track.keyframes.length < 2) return track;
  const keyframes = track.keyframes.filter((k) => k.frame !== frame);
  if (keyframes.length === track.keyframes.length) return track;
  return { ...track, keyframes, reviewed: true };
}

/**
 * Sets the in (first) or out (last) frame of a track. Keyframes outside the new span are dropped;
 * the box at the new end, interpolated, becomes a keyframe so nothing jumps.
 */
export function setSpan(track: Track, firstFrame: number, lastFrame: number): Track | null {
  if (lastFrame < firstFrame) return null;
  const startBox = boxAt({ ...track, firstFrame: Math.min(track.firstFrame, firstFrame), lastFrame: Math.max(track.lastFrame, lastFrame) }, firstFrame)!;
  const endBox = boxAt({ ...track, firstFrame: Math.min(track.firstFrame, firstFrame), lastFrame: Math.max(track.lastFrame, lastFrame) }, lastFrame)!;
  let keyframes = track.keyframes.filter((k) => k.frame >= firstFrame && k.frame <= lastFrame);
  if (!keyframes.length || keyframes[0]!.frame !== firstFrame) keyframes = [{ frame: firstFrame, box: roundBox(startBox), score: null, source: "manual" }, ...keyframes];
  if (keyframes.at(-1)!.frame !== lastFrame) keyframes = [...keyframes, { frame: lastFrame, box: roundBox(endBox), score: null, source: "manual" }];
  return { ...track, firstFrame, lastFrame, keyframes, reviewed: true };
}

/** Splits a track at `frame`: the first part ends at frame - 1, the second (new id) starts at `frame`. */
export function splitTrack(track: Track, frame: number, newId: number): [Track, Track] | null {
  if (frame <= track.firstFrame || frame > track.lastFrame) return null;
  const a = setSpan(track, track.firstFrame, frame - 1)!;
  const b = setSpan({ ...track, id: newId }, frame, track.lastFrame)!;
  return [a, b];
}

/**
 * Merges two tracks into the first one's id: the span covers both, keyframes of both (where both
 * have one on the same frame, the first track's wins), the type of the first.
 */
export function mergeTracks(a: Track, b: Track): Track {
  const byFrame = new Map<number, Keyframe>();
  for (const k of b.keyframes) byFrame.set(k.frame, k);
  for (const k of a.keyframes) byFrame.set(k.frame, k);
  const keyframes = [...byFrame.values()].sort((x, y) => x.frame - y.frame);
  return {
    ...a,
    firstFrame: Math.min(a.firstFrame, b.firstFrame),
    lastFrame: Math.max(a.lastFrame, b.lastFrame),
    keyframes,
    enabled: isEnabled(a) || isEnabled(b) ? undefined : false,
    manual: a.manual || b.manual || undefined,
    reviewed: true,
  };
}

export type DrawMode = "static" | "auto" | "live";

/**
 * A track a reviewer draws at `frame`. `static`: the same box on every frame of the video; the
 * others start as a one-frame track that following (auto) or live tracking extends.
 */
export function drawnTrack(id: number, type: Track["type"], frame: number, box: Box, mode: DrawMode, frameCount: number): Track {
  const kf: Keyframe = { frame: mode === "static" ? 0 : frame, box: roundBox(box), score: null, source: "manual" };
  if (mode === "static") return { id, type, firstFrame: 0, lastFrame: Math.max(0, frameCount - 1), keyframes: [kf], manual: true, reviewed: true };
  return { id, type, firstFrame: frame, lastFrame: frame, keyframes: [kf], manual: true, reviewed: true };
}

/** The next free track id (ids are never reused within what the editor holds). */
export const nextId = (tracks: readonly Track[]) => tracks.reduce((m, t) => Math.max(m, t.id), 0) + 1;

/** Next (dir 1) or previous (-1) keyframe frame of a track from `frame`, or null. */
export function neighbourKeyframe(track: Track, frame: number, dir: 1 | -1): number | null {
  const k = track.keyframes;
  if (dir > 0) {
    for (const kf of k) if (kf.frame > frame) return kf.frame;
    return null;
  }
  for (let i = k.length - 1; i >= 0; i--) if (k[i]!.frame < frame) return k[i]!.frame;
  return null;
}

/**
 * The next track needing attention after `fromTrackId` in start order: not yet reviewed, or a
 * detector score below `lowScore`. Wraps around; null when none is left.
 */
export function nextToReview(tracks: readonly Track[], fromTrackId: number | null, lowScore: number): Track | null {
  const sorted = [...tracks].sort((a, b) => a.firstFrame - b.firstFrame || a.id - b.id);
  const needs = (t: Track) => !t.reviewed || (trackScore(t) ?? 1) < lowScore;
  const start = fromTrackId == null ? -1 : sorted.findIndex((t) => t.id === fromTrackId);
  for (let n = 1; n <= sorted.length; n++) {
    const t = sorted[(start + n + sorted.length) % sorted.length]!;
    if (needs(t) && t.id !== fromTrackId) return t;
  }
  return null;
}

/** Accept (enabled, reviewed) or reject (switched off, reviewed) every track matching the filter. */
export function bulkDecide(tracks: readonly Track[], filter: { type?: Track["type"] | "all"; below?: number | null }, accept: boolean): Track[] {
  return tracks.map((t) => {
    if (filter.type && filter.type !== "all" && t.type !== filter.type) return t;
    if (filter.below != null) {
      const s = trackScore(t);
      if (s == null || s >= filter.below) return t;
    }
    return { ...t, enabled: accept ? undefined : false, reviewed: true };
  });
}

/** A bounded undo/redo history of immutable snapshots. */
export interface History<T> {
  past: T[];
  present: T;
  future: T[];
}

export const history = <T>(present: T): History<T> => ({ past: [], present, future: [] });

export function commit<T>(h: History<T>, next: T, limit = 500): History<T> {
  if (next === h.present) return h;
  const past = [...h.past, h.present];
  return { past: past.length > limit ? past.slice(past.length - limit) : past, present: next, future: [] };
}

export function undo<T>(h: History<T>): History<T> {
  if (!h.past.length) return h;
  return { past: h.past.slice(0, -1), present: h.past.at(-1)!, future: [h.present, ...h.future] };
}

export function redo<T>(h: History<T>): History<T> {
  if (!h.future.length) return h;
  return { past: [...h.past, h.present], present: h.future[0]!, future: h.future.slice(1) };
}

/** Live tracking: appends a box at `frame` (the pointer's), keeping the track's span. */
export function liveStep(track: Track, frame: number, box: Box): Track {
  return setKeyframe(track, frame, box);
}

/** Frame of a media time, and the media time that shows a frame (the middle of its interval, so rounding never lands on the neighbour). */
export const frameOf = (seconds: number, fps: number) => Math.max(0, Math.floor(seconds * fps + 1e-3));
export const timeOf = (frame: number, fps: number) => (frame + 0.5) / fps;
