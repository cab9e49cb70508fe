/**
 * Tracking settings per `profileName` of the spec (ProcessConfig). Times are set in seconds and
 * turned into frames with the video's fps (ffprobe's, never typed in), so a 60 fps video gets the
 * same behaviour per second as a 30 fps one. Frames = max(1, round(seconds x fps)).
 *
 * | profile          | stride s (@25/30/60 fps) | stage1 IoU | stage2 IoU | IoU buffer | maxMissed s (@30) | tail s (@30)   | head (@30)    | low x thr | new x thr |
 * |------------------|--------------------------|------------|------------|------------|-------------------|----------------|---------------|-----------|-----------|
 * | gen6_standard    | 0.1    (3 / 3 / 6)       | 0.2        | 0.5        | 0.1        | 1.0 (30)          | 0.2 (6)        | stride-1 (2)  | 0.5       | 1.0       |
 * | gen6_highMotion  | 1/30   (1 / 1 / 2)       | 0.1        | 0.3        | 0.3        | 0.5 (15)          | 0.2 (6)        | stride-1 (0)  | 0.4       | 1.0       |
 * | gen6_conference  | 1/6    (4 / 5 / 10)      | 0.3        | 0.5        | 0          | 2.0 (60)          | 0.5 (15)       | stride-1 (4)  | 0.5       | 1.0       |
 * | gen5_standard    | as gen6_standard                                                                                                                   |
 * | gen5_highMotion  | as gen6_highMotion                                                                                                                 |
 *
 * (stage-1 high-score threshold = 1.0 x the request's threshold in every profile; tailFrames is
 * never below the stride, maxMissedFrames never below twice the stride.)
 *
 * Why these numbers:
 * - Stride (frames between detector runs). standard: 0.1 s, 10 detections a second. At walking
 *   speed a face moves well under half its width in 0.1 s, so the Kalman prediction still
 *   overlaps it and interpolation between detections stays within a few pixels; it cuts detector
 *   time by 3 at 30 fps, and the detector (tiled, 0.3-2 s a 1024-px frame on CPU, see the
 *   architecture notes) is the whole cost. highMotion (body and dash cameras, the spec's
 *   recommendation): every frame up to 30 fps (2 at 60) — a camera pan moves everything tens of
 *   pixels a frame and linear interpolation over several frames of a shaking camera would leave
 *   faces uncovered. conference: 1/6 s (5 at 30 fps): seated people barely move, and meetings
 *   are long recordings.
 * - Stage-1 IoU (high-score detections vs predicted boxes): ByteTrack's 0.2 (its match_thresh 0.8
 *   is a cost 1 - IoU). highMotion looser (0.1): predictions lag under camera shake and an
 *   unmatched face starts a new track, which is safe but splits ids. conference stricter (0.3):
 *   faces sit side by side in a gallery view, tracks hardly move, a loose gate could swap
 *   neighbours.
 * - Stage-2 IoU (low-score detections, which may only continue tracks): ByteTrack's 0.5; 0.3 for
 *   highMotion, where motion blur is what lowers the scores and also the overlap.
 * - IoU buffer (C-BIoU, assign.ts): boxes grown by this fraction of their size on each side
 *   before IoU, so a prediction that missed its object (a new track has no velocity yet; 0.1 s
 *   of motion at stride 3) can still match it. 0.1 standard; 0.3 highMotion (the C-BIoU paper's
 *   first-stage value, made for fast irregular motion); 0 conference (adjacent faces would start
 *   overlapping).
 * - maxMissed (how long a lost track waits to be found again, reported meanwhile as predicted
 *   boxes): ByteTrack's track_buffer, 30 frames at 30 fps = 1 s. highMotion 0.5 s: under camera
 *   motion a half-second-old prediction is usually off its object and with the looser gates it
 *   could latch onto another one. conference 2 s: heads turn away and profile faces drop out of
 *   the detector for a second or two while the person stays in place.
 * - tail (frames kept after the last detection in the stored track): at least one stride — the
 *   object was there at its last detection and nothing is known until the next detection frame,
 *   which may itself be a miss. 0.2 s standard and highMotion (short enough that a box does not
 *   visibly linger after a face leaves), 0.5 s conference (a box over a still seat costs nothing).
 * - head (frames added before the first detection): stride - 1, the frames since the previous
 *   detection frame in which the object may already have been in view.
 * - Score thresholds, relative to the request's threshold (innerObjectsConfidenceThreshold for
 *   faces, plates and every other non-primary type, objectsConfidenceThreshold for people and
 *   vehicles, the spec's primary objects): everything at or above the request's threshold is
 *   high (stage 1) and starts a track if unmatched (new x thr = 1.0) — for redaction every
 *   detection the user asked for must be covered, so ByteTrack's "+0.1 to start a track" is
 *   dropped. The detector runs lower, at low x thr (0.5; 0.4 for highMotion where motion blur
 *   costs score; never below 0.05): detections between the two only continue existing tracks
 *   (ByteTrack's second stage), which is what keeps a face tracked through a blurred or
 *   half-turned frame without letting low-score noise start tracks.
 * - gen5 vs gen6: the generation selects the detector set (vision module, `generation` below);
 *   tracking is the same for both, so the gen5 profiles take their gen6 counterpart's numbers.
 */
import type { PROFILE_NAMES } from "@/lib/api/video";
import type { ObjectType } from "@/server/vision/types";
import type { TrackerParams } from "./tracker";

/** The spec's profileName values (the list lives with the request schema, lib/api/video.ts). */
export type ProfileName = (typeof PROFILE_NAMES)[number];

interface ProfileSpec {
  generation: 5 | 6;
  strideSeconds: number;
  stage1Iou: number;
  stage2Iou: number;
  iouBuffer: number;
  maxMissedSeconds: number;
  tailSeconds: number;
  lowScoreFactor: number;
}

const STANDARD = { strideSeconds: 0.1, stage1Iou: 0.2, stage2Iou: 0.5, iouBuffer: 0.1, maxMissedSeconds: 1.0, tailSeconds: 0.2, lowScoreFactor: 0.5 };
const HIGH_MOTION = { strideSeconds: 1 / 30, stage1Iou: 0.1, stage2Iou: 0.3, iouBuffer: 0.3, maxMissedSeconds: 0.5, tailSeconds: 0.2, lowScoreFactor: 0.4 };
const CONFERENCE = { strideSeconds: 1 / 6, stage1Iou: 0.3, stage2Iou: 0.5, iouBuffer: 0, maxMissedSeconds: 2.0, tailSeconds: 0.5, lowScoreFactor: 0.5 };

/** The table above, in seconds. */
export const PROFILE_SPECS: Readonly<Record<ProfileName, Readonly<ProfileSpec>>> = {
  gen6_standard: { generation: 6, ...STANDARD },
  gen6_highMotion: { generation: 6, ...HIGH_MOTION },
  gen6_conference: { generation: 6, ...CONFERENCE },
  gen5_standard: { generation: 5, ...STANDARD },
  gen5_highMotion: { generation: 5, ...HIGH_MOTION },
};

/** Stage 1 takes detections at or above the request's threshold in every profile. */
export const HIGH_SCORE_FACTOR = 1.0;
/** Unmatched detections at or above the request's threshold start tracks in every profile. */
export const NEW_TRACK_SCORE_FACTOR = 1.0;
/** The low-score threshold never goes below this (below it detectors return mostly noise). */
export const MIN_LOW_THRESHOLD = 0.05;

/** Types the spec calls primary objects (objectsConfidenceThreshold); the rest use the inner one. */
export const PRIMARY_OBJECT_TYPES: readonly ObjectType[] = ["person", "vehicle"];

export interface TrackingProfile {
  name: ProfileName;
  /** Detector generation the profile asks for (5 or 6). */
  generation: 5 | 6;
  fps: number;
  /** Run the detector on every `detectionStride`-th frame (1 = every frame). */
  detectionStride: number;
  stage1Iou: number;
  stage2Iou: number;
  iouBuffer: number;
  maxMissedFrames: number;
  tailFrames: number;
  headFrames: number;
  /** Multipliers of the request's confidence threshold. */
  highScoreFactor: number;
  newTrackScoreFactor: number;
  lowScoreFactor: number;
}

const toFrames = (seconds: number, fps: number) => Math.max(1, Math.round(seconds * fps));

export function isProfileName(name: string): name is ProfileName {
  return Object.prototype.hasOwnProperty.call(PROFILE_SPECS, name);
}

/** The profile's settings for a video of `fps` frames per second. */
export function trackingProfile(profileName: ProfileName | string, fps: number): TrackingProfile {
  if (!isProfileName(profileName)) throw new RangeError(`unknown profileName ${JSON.stringify(profileName)}`);
  if (!Number.isFinite(fps) || fps <= 0) throw new RangeError(`fps must be a positive number, got ${fps}`);
  const s = PROFILE_SPECS[profileName];
  const stride = toFrames(s.strideSeconds, fps);
  return {
    name: profileName,
    generation: s.generation,
    fps,
    detectionStride: stride,
    stage1Iou: s.stage1Iou,
    stage2Iou: s.stage2Iou,
    iouBuffer: s.iouBuffer,
    maxMissedFrames: Math.max(2 * stride, toFrames(s.maxMissedSeconds, fps)),
    tailFrames: Math.max(stride, toFrames(s.tailSeconds, fps)),
    headFrames: stride - 1,
    highScoreFactor: HIGH_SCORE_FACTOR,
    newTrackScoreFactor: NEW_TRACK_SCORE_FACTOR,
    lowScoreFactor: s.lowScoreFactor,
  };
}

/** The request's thresholds (ProcessConfig, defaults applied). */
export interface RequestThresholds {
  /** objectsConfidenceThreshold: people, vehicles. */
  objects: number;
  /** innerObjectsConfidenceThreshold: faces, plates and the other types. */
  inner: number;
}

export function requestThresholdFor(type: ObjectType, t: RequestThresholds): number {
  return PRIMARY_OBJECT_TYPES.includes(type) ? t.objects : t.inner;
}

/** The threshold to run the detector at for a request threshold: the tracker's low threshold. */
export function detectorThreshold(profile: TrackingProfile, requestThreshold: number): number {
  return Math.min(requestThreshold, Math.max(MIN_LOW_THRESHOLD, profile.lowScoreFactor * requestThreshold));
}

/** Tracker parameters for a profile and the request's thresholds, per object type. */
export function trackerParams(profile: TrackingProfile, thresholds: RequestThresholds): TrackerParams {
  const scores = (thr: number) => ({
    high: Math.min(1, profile.highScoreFactor * thr),
    newTrack: Math.min(1, profile.newTrackScoreFactor * thr),
    low: detectorThreshold(profile, thr),
  });
  const inner = scores(thresholds.inner);
  const objects = scores(thresholds.objects);
  const byType: Partial<Record<ObjectType, ReturnType<typeof scores>>> = {};
  for (const type of PRIMARY_OBJECT_TYPES) byType[type] = objects;
  return {
    highThreshold: inner.high,
    newTrackThreshold: inner.newTrack,
    lowThreshold: inner.low,
    thresholdsByType: byType,
    stage1Iou: profile.stage1Iou,
    stage2Iou: profile.stage2Iou,
    iouBuffer: profile.iouBuffer,
    maxMissedFrames: profile.maxMissedFrames,
    tailFrames: profile.tailFrames,
    headFrames: profile.headFrames,
  };
}
