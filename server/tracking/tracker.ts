/**
 * ByteTrack-style multi-object tracker (Zhang et al., ECCV 2022) with a Kalman filter per track,
 * plus the keyframe form tracks take in the session state.
 *
 * Per call of `update(frame, detections)` (a detection frame; frames may skip, e.g. every 3rd):
 *   1. Tracks whose last detection is more than `maxMissedFrames` before `frame` end. The others
 *      are predicted forward by as many steps as frames passed since their last update.
 *   2. Detections are split per object `type` (a face never joins a plate track) and by score:
 *      high (>= high threshold), low (>= low threshold), the rest ignored.
 *   3. Stage 1: high detections against every live track of the type (tracked and lost), by IoU
 *      of the predicted box (optionally buffered, see assign.ts), optimal matching above `stage1Iou`.
 *   4. Stage 2: low detections against the tracks still unmatched that were matched at their
 *      previous update (not lost ones: ByteTrack's rule, a low score alone does not revive a
 *      track), above `stage2Iou`. Low detections left over are dropped: they never start tracks.
 *   5. Unmatched high detections with score >= `newTrackThreshold` start tracks, ids 1, 2, 3...
 *   6. Unmatched tracks become lost and are still returned with their predicted box and
 *      `predicted: true` so a live renderer keeps redacting them.
 *
 * Differences from ByteTrack, for redaction where a face left visible is the worst outcome: a new
 * track is reported at once (no "unconfirmed" first frame), the new-track threshold is the
 * request's own threshold (profiles.ts) rather than that plus 0.1, and a track that is never
 * confirmed still keeps its detections.
 *
 * Keyframe policy of `finish()` (the CVAT lesson: store keyframes, interpolate between them):
 *   - every detected frame is a keyframe, with the detector's box and score;
 *   - between two detected keyframes boxes are interpolated linearly, also across frames where the
 *     track was lost and then found again: once both ends are known, the straight line between
 *     them is a better estimate than the forward prediction made from one end, so the predictions
 *     made in such a gap are not stored;
 *   - tail: the track ends `tailFrames` after its last detection (not `maxMissedFrames`, which only
 *     says how long to wait for a re-association), with one predicted keyframe there, the last
 *     detected box moved on by the filter's velocity;
 *   - head: it starts `headFrames` before its first detection (the frames since the previous
 *     detection frame in which the object may already have been visible), with one predicted
 *     keyframe there, the first box moved back by the velocity seen between the first two
 *     detections (size kept);
 *   - both clamped to [0, frameCount - 1] when the frame count is given.
 * A track is therefore exactly one keyframe per detection plus at most two predicted ones.
 */
import type { Box } from "@/lib/geometry";
import type { Detection, ObjectType } from "@/server/vision/types";
import { iouMatrix, matchBySimilarity } from "./assign";
import { BoxKalman } from "./kalman";

export interface ScoreThresholds {
  /** Detections at or above go to stage 1. */
  high: number;
  /** Unmatched stage-1 detections at or above start a track. */
  newTrack: number;
  /** Detections below are ignored; between `low` and `high` they may only continue a track. */
  low: number;
}

export interface TrackerParams {
  highThreshold: number;
  newTrackThreshold: number;
  lowThreshold: number;
  /** Per-type overrides of the three score thresholds (e.g. faces and plates use the "inner" threshold). */
  thresholdsByType?: Partial<Record<ObjectType, Partial<ScoreThresholds>>>;
  /** Minimum IoU of a stage-1 (high score) match. ByteTrack: 0.2 (match_thresh 0.8 as a cost). */
  stage1Iou: number;
  /** Minimum IoU of a stage-2 (low score) match. ByteTrack: 0.5. */
  stage2Iou: number;
  /** Boxes grown by this fraction of their size on each side before IoU (C-BIoU). Default 0. */
  iouBuffer?: number;
  /** A track with no detection for more than this many frames ends. */
  maxMissedFrames: number;
  /** Frames kept after a track's last detection in `finish()` output. */
  tailFrames: number;
  /** Frames added before a track's first detection in `finish()` output. Default 0. */
  headFrames?: number;
}

/** One live track as seen at an `update` call. */
export interface TrackState {
  id: number;
  type: ObjectType;
  label?: string;
  frame: number;
  /** The matched detection's box, or the filter's prediction when `predicted`. */
  box: Box;
  /** The matched detection's score; null when predicted. */
  score: number | null;
  predicted: boolean;
  /** Detections matched so far. */
  hits: number;
  firstFrame: number;
  lastDetectedFrame: number;
  /** Frames since the last detection (0 when matched now). */
  missedFrames: number;
}

export interface Keyframe {
  frame: number;
  box: Box;
  /** Detector score; null for a predicted keyframe. */
  score: number | null;
  /** "manual": drawn or moved by a reviewer (the editor); rendered like the others. */
  source: "detected" | "predicted" | "manual";
}

/** A finished track, as stored in the session state. */
export interface Track {
  id: number;
  type: ObjectType;
  label?: string;
  firstFrame: number;
  lastFrame: number;
  /** Sorted by frame; the first is at `firstFrame`, the last at `lastFrame`. */
  keyframes: Keyframe[];
  /** Absent or true: the track is redacted when rendering; false: switched off by a reviewer. */
  enabled?: boolean;
  /** True when a reviewer drew the track (not found by a detector). */
  manual?: boolean;
  /** True once a reviewer accepted, rejected or edited the track in the editor. */
  reviewed?: boolean;
}

export interface FinishOptions {
  /** Frames in the video: keyframes are clamped to frameCount - 1. */
  frameCount?: number;
}

interface TrackRecord {
  id: number;
  type: ObjectType;
  label?: string;
  labelScore: number;
  kf: BoxKalman;
  /** Frame the filter's state refers to. */
  frame: number;
  /** "tracked": matched at its last update; "lost": not. */
  state: "tracked" | "lost";
  hits: number;
  lastDetected: number;
  detected: Keyframe[];
  /** Filter velocity (cx, cy) right after the last detection, for the tail keyframe. */
  tailVelocity: [number, number];
}

function checkParams(p: TrackerParams): void {
  const unit = (name: string, v: unknown) => {
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 1) throw new RangeError(`tracker ${name} must be a number in [0, 1], got ${String(v)}`);
  };
  const frames = (name: string, v: unknown) => {
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new RangeError(`tracker ${name} must be a whole number >= 0, got ${String(v)}`);
  };
  unit("highThreshold", p.highThreshold);
  unit("newTrackThreshold", p.newTrackThreshold);
  unit("lowThreshold", p.lowThreshold);
  unit("stage1Iou", p.stage1Iou);
  unit("stage2Iou", p.stage2Iou);
  if (p.iouBuffer !== undefined && (!Number.isFinite(p.iouBuffer) || p.iouBuffer < 0)) throw new RangeError(`tracker iouBuffer must be >= 0`);
  frames("maxMissedFrames", p.maxMissedFrames);
  frames("tailFrames", p.tailFrames);
  if (p.headFrames !== undefined) frames("headFrames", p.headFrames);
}

function validBox(b: Box | undefined): b is Box {
  return !!b && Number.isFinite(b.x) && Number.isFinite(b.y) && Number.isFinite(b.width) && Number.isFinite(b.height) && b.width > 0 && b.height > 0;
}

const copyBox = (b: Box): Box => ({ x: b.x, y: b.y, width: b.width, height: b.height });
const shiftBox = (b: Box, dx: number, dy: number): Box => ({ x: b.x + dx, y: b.y + dy, width: b.width, height: b.height });

export class Tracker {
  readonly params: Readonly<TrackerParams>;
  private nextId = 1;
  private lastFrame: number | null = null;
  private finished = false;
  private readonly active = new Map<ObjectType, TrackRecord[]>();
  private ended: TrackRecord[] = [];
  private readonly thresholdCache = new Map<ObjectType, ScoreThresholds>();

  constructor(params: TrackerParams) {
    checkParams(params);
    this.params = { ...params };
  }

  /** The score thresholds that apply to `type`. */
  thresholds(type: ObjectType): ScoreThresholds {
    let t = this.thresholdCache.get(type);
    if (!t) {
      const o = this.params.thresholdsByType?.[type] ?? {};
      t = {
        high: o.high ?? this.params.highThreshold,
        newTrack: o.newTrack ?? this.params.newTrackThreshold,
        low: o.low ?? this.params.lowThreshold,
      };
      this.thresholdCache.set(type, t);
    }
    return t;
  }

  /**
   * Feeds the detections of one frame. Frames must increase (gaps allowed). Returns every live
   * track, sorted by id: matched ones with their detection, the others predicted.
   */
  update(frameIndex: number, detections: readonly Detection[]): TrackState[] {
    if (this.finished) throw new Error("Tracker.update after finish()");
    if (!Number.isInteger(frameIndex) || frameIndex < 0) throw new RangeError(`frameIndex must be a whole number >= 0, got ${frameIndex}`);
    if (this.lastFrame !== null && frameIndex <= this.lastFrame) {
      throw new RangeError(`frameIndex must increase: got ${frameIndex} after ${this.lastFrame}`);
    }
    this.lastFrame = frameIndex;

    const byType = new Map<ObjectType, Detection[]>();
    for (const d of detections) {
      if (!validBox(d.box) || !Number.isFinite(d.score)) continue;
      if (d.score < this.thresholds(d.type).low) continue;
      let list = byType.get(d.type);
      if (!list) byType.set(d.type, (list = []));
      list.push(d);
    }

    const out: TrackState[] = [];
    const types = new Set<ObjectType>([...this.active.keys(), ...byType.keys()]);
    for (const type of types) this.step(type, frameIndex, byType.get(type) ?? [], out);
    out.sort((a, b) => a.id - b.id);
    return out;
  }

  /**
   * Ends every track and returns all tracks of the run (those already handed out by
   * `takeEnded()` excepted) in keyframe form, sorted by id. The tracker cannot be used afterwards.
   */
  finish(opts: FinishOptions = {}): Track[] {
    if (!this.finished) {
      for (const list of this.active.values()) this.ended.push(...list);
      this.active.clear();
      this.finished = true;
    }
    const tracks = this.ended.map((r) => toTrack(r, this.params, opts.frameCount));
    this.ended = [];
    return tracks.sort((a, b) => a.id - b.id);
  }

  /**
   * Tracks that have ended so far (no detection for more than maxMissedFrames), in keyframe form,
   * and forgets them: lets a long video stream its tracks out instead of holding them all.
   */
  takeEnded(opts: FinishOptions = {}): Track[] {
    const tracks = this.ended.map((r) => toTrack(r, this.params, opts.frameCount));
    this.ended = [];
    return tracks.sort((a, b) => a.id - b.id);
  }

  private step(type: ObjectType, frame: number, dets: Detection[], out: TrackState[]): void {
    const p = this.params;
    const th = this.thresholds(type);
    const buffer = p.iouBuffer ?? 0;

    // 1. End stale tracks, predict the others to this frame.
    const tracks: TrackRecord[] = [];
    for (const t of this.active.get(type) ?? []) {
      if (frame - t.lastDetected > p.maxMissedFrames) {
        this.ended.push(t);
        continue;
      }
      t.kf.predict(frame - t.frame, { freezeSize: t.state === "lost" });
      t.frame = frame;
      tracks.push(t);
    }
    const predicted = tracks.map((t) => t.kf.box());
    const matchedDet = new Array<Detection | null>(tracks.length).fill(null);

    // 2. Split by score.
    const high: Detection[] = [];
    const low: Detection[] = [];
    for (const d of dets) (d.score >= th.high ? high : low).push(d);

    // 3. Stage 1: high-score detections against all tracks.
    const m1 = matchBySimilarity(iouMatrix(predicted, high.map((d) => d.box), buffer), tracks.length, high.length, p.stage1Iou);
    for (const [r, c] of m1.pairs) matchedDet[r] = high[c]!;

    // 4. Stage 2: low-score detections against the unmatched tracks that were tracked until now.
    const rest = m1.unmatchedRows.filter((r) => tracks[r]!.state === "tracked");
    if (rest.length > 0 && low.length > 0) {
      const m2 = matchBySimilarity(iouMatrix(rest.map((r) => predicted[r]!), low.map((d) => d.box), buffer), rest.length, low.length, p.stage2Iou);
      for (const [r, c] of m2.pairs) matchedDet[rest[r]!] = low[c]!;
    }

    const alive: TrackRecord[] = [];
    tracks.forEach((t, i) => {
      const d = matchedDet[i];
      if (d) this.apply(t, d, frame);
      else t.state = "lost";
      alive.push(t);
      out.push(this.state(t, frame, d ? d : null, predicted[i]!));
    });

    // 5. New tracks from unmatched high-score detections, best first.
    const births = m1.unmatchedCols
      .map((c) => high[c]!)
      .filter((d) => d.score >= th.newTrack)
      .sort((a, b) => b.score - a.score);
    for (const d of births) {
      const t: TrackRecord = {
        id: this.nextId++,
        type,
        labelScore: -Infinity,
        kf: new BoxKalman(d.box),
        frame,
        state: "tracked",
        hits: 0,
        lastDetected: frame,
        detected: [],
        tailVelocity: [0, 0],
      };
      this.record(t, d, frame);
      alive.push(t);
      out.push(this.state(t, frame, d, d.box));
    }

    if (alive.length > 0) this.active.set(type, alive);
    else this.active.delete(type);
  }

  private apply(t: TrackRecord, d: Detection, frame: number): void {
    t.kf.update(d.box);
    this.record(t, d, frame);
  }

  private record(t: TrackRecord, d: Detection, frame: number): void {
    t.state = "tracked";
    t.hits++;
    t.lastDetected = frame;
    t.detected.push({ frame, box: copyBox(d.box), score: d.score, source: "detected" });
    const v = t.kf.velocity();
    t.tailVelocity = [v[0], v[1]];
    // The label of the most confident detection (a "car" seen once as "truck" stays "car").
    if (d.label !== undefined && d.score >= t.labelScore) {
      t.label = d.label;
      t.labelScore = d.score;
    }
  }

  private state(t: TrackRecord, frame: number, d: Detection | null, predictedBox: Box): TrackState {
    const s: TrackState = {
      id: t.id,
      type: t.type,
      frame,
      box: d ? copyBox(d.box) : copyBox(predictedBox),
      score: d ? d.score : null,
      predicted: !d,
      hits: t.hits,
      firstFrame: t.detected[0]!.frame,
      lastDetectedFrame: t.lastDetected,
      missedFrames: frame - t.lastDetected,
    };
    if (t.label !== undefined) s.label = t.label;
    return s;
  }
}

/** A track record in keyframe form (policy in the header comment). */
function toTrack(r: TrackRecord, p: Readonly<TrackerParams>, frameCount?: number): Track {
  const det = r.detected;
  const first = det[0]!;
  const last = det[det.length - 1]!;
  const maxFrame = frameCount !== undefined ? Math.max(frameCount - 1, last.frame) : Infinity;
  const keyframes: Keyframe[] = [];

  const headStart = Math.max(0, first.frame - (p.headFrames ?? 0));
  if (headStart < first.frame) {
    let vx = 0;
    let vy = 0;
    if (det.length >= 2) {
      const a = first.box;
      const b = det[1]!.box;
      const dt = det[1]!.frame - first.frame;
      vx = (b.x + b.width / 2 - (a.x + a.width / 2)) / dt;
      vy = (b.y + b.height / 2 - (a.y + a.height / 2)) / dt;
    }
    const k = first.frame - headStart;
    keyframes.push({ frame: headStart, box: shiftBox(first.box, -vx * k, -vy * k), score: null, source: "predicted" });
  }

  for (const k of det) keyframes.push({ frame: k.frame, box: copyBox(k.box), score: k.score, source: "detected" });

  const tailEnd = Math.min(last.frame + p.tailFrames, maxFrame);
  if (tailEnd > last.frame) {
    const k = tailEnd - last.frame;
    keyframes.push({ frame: tailEnd, box: shiftBox(last.box, r.tailVelocity[0] * k, r.tailVelocity[1] * k), score: null, source: "predicted" });
  }

  const t: Track = { id: r.id, type: r.type, firstFrame: keyframes[0]!.frame, lastFrame: keyframes[keyframes.length - 1]!.frame, keyframes };
  if (r.label !== undefined) t.label = r.label;
  return t;
}

function lerpBox(a: Box, b: Box, t: number): Box {
  return {
    x: a.x + (b.x - a.x) * t,
    y: a.y + (b.y - a.y) * t,
    width: a.width + (b.width - a.width) * t,
    height: a.height + (b.height - a.height) * t,
  };
}

/** Box of keyframes[i] moved towards keyframes[i + 1] for `frame` (keyframes[i].frame <= frame). */
function boxFrom(keyframes: readonly Keyframe[], i: number, frame: number): Box {
  const a = keyframes[i]!;
  const b = keyframes[i + 1];
  if (!b || frame <= a.frame) return copyBox(a.box);
  return lerpBox(a.box, b.box, (frame - a.frame) / (b.frame - a.frame));
}

/**
 * The track's box at `frame`: a keyframe's box, or linear interpolation between the keyframes
 * around it; null outside [firstFrame, lastFrame].
 */
export function boxAt(track: Track, frame: number): Box | null {
  const ks = track.keyframes;
  if (ks.length === 0 || !(frame >= track.firstFrame && frame <= track.lastFrame)) return null;
  // Last keyframe at or before `frame` (binary search).
  let lo = 0;
  let hi = ks.length - 1;
  if (frame < ks[0]!.frame) return copyBox(ks[0]!.box);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ks[mid]!.frame <= frame) lo = mid;
    else hi = mid - 1;
  }
  return boxFrom(ks, lo, frame);
}

export interface TrackBox {
  trackId: number;
  type: ObjectType;
  box: Box;
}

/**
 * Per-frame boxes of all tracks for frames [from, to) — what a renderer walks through. One sweep:
 * each track keeps a cursor on its keyframes, so a frame costs O(live tracks).
 */
export function* trackBoxesByFrame(tracks: readonly Track[], frameCount: number, from = 0): Generator<{ frame: number; boxes: TrackBox[] }> {
  const order = tracks.filter((t) => t.keyframes.length > 0).sort((a, b) => a.firstFrame - b.firstFrame || a.id - b.id);
  let next = 0;
  let live: Array<{ track: Track; k: number }> = [];
  for (let frame = Math.max(0, from); frame < frameCount; frame++) {
    let added = false;
    while (next < order.length && order[next]!.firstFrame <= frame) {
      const track = order[next++]!;
      if (track.lastFrame >= frame) {
        live.push({ track, k: 0 });
        added = true;
      }
    }
    if (added) live.sort((a, b) => a.track.id - b.track.id);
    live = live.filter((e) => e.track.lastFrame >= frame);
    const boxes: TrackBox[] = [];
    for (const e of live) {
      const ks = e.track.keyframes;
      while (e.k + 1 < ks.length && ks[e.k + 1]!.frame <= frame) e.k++;
      boxes.push({ trackId: e.track.id, type: e.track.type, box: boxFrom(ks, e.k, frame) });
    }
    yield { frame, boxes };
  }
}

/** All per-frame boxes at once: index = frame, for frames 0..frameCount-1. */
export function expandTracks(tracks: readonly Track[], frameCount: number): TrackBox[][] {
  const out: TrackBox[][] = [];
  for (const { boxes } of trackBoxesByFrame(tracks, frameCount)) out.push(boxes);
  return out;
}
