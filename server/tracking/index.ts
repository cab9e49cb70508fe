/**
 * Tracking: joins per-frame detections into tracks (pure code, no I/O).
 *
 * - `Tracker` (tracker.ts): ByteTrack-style two-stage association, one Kalman filter per track,
 *   tracks kept per object type. Call `update(frame, detections)` on each detection frame (frames
 *   may skip: detection every Nth frame); it returns the live tracks, with predicted boxes
 *   (`predicted: true`) for tracks that missed this frame. `finish({ frameCount })` returns the
 *   tracks for the session state as keyframes: every detected frame, plus one predicted keyframe
 *   at each end (head and tail margins); `takeEnded()` streams out tracks that ended early.
 * - `boxAt(track, frame)`: a track's box at any frame by linear interpolation between keyframes
 *   (null outside the track); `trackBoxesByFrame` / `expandTracks`: per-frame boxes of all tracks,
 *   for the renderer.
 * - `trackingProfile(profileName, fps)` (profiles.ts): detection stride, association gates,
 *   lifetimes and score factors per spec profile, in frames for the video's fps;
 *   `trackerParams(profile, { objects, inner })` turns it and the request's thresholds into
 *   `TrackerParams`; `detectorThreshold` is the threshold to run detectors at.
 * - `BoxKalman` (kalman.ts) and `matchBySimilarity` / `hungarian` (assign.ts): the building blocks.
 *
 * Typical use in the video pipeline:
 *
 *   const profile = trackingProfile(spec.process.profileName, media.fps);
 *   const tracker = new Tracker(trackerParams(profile, { objects, inner }));
 *   for (let f = 0; f < frameCount; f += profile.detectionStride) tracker.update(f, await detect(frame f));
 *   const tracks = tracker.finish({ frameCount });         // -> detections.json
 *   for (const { frame, boxes } of trackBoxesByFrame(tracks, frameCount)) render(frame, boxes);
 */
export { BoxKalman, boxToMeasurement, measurementToBox, type PredictOptions } from "./kalman";
export { hungarian, matchBySimilarity, bufferedIou, iouMatrix, type Matching } from "./assign";
export {
  Tracker,
  boxAt,
  trackBoxesByFrame,
  expandTracks,
  type TrackerParams,
  type ScoreThresholds,
  type TrackState,
  type Track,
  type Keyframe,
  type TrackBox,
  type FinishOptions,
} from "./tracker";
export {
  trackingProfile,
  trackerParams,
  detectorThreshold,
  requestThresholdFor,
  isProfileName,
  PROFILE_SPECS,
  PRIMARY_OBJECT_TYPES,
  HIGH_SCORE_FACTOR,
  NEW_TRACK_SCORE_FACTOR,
  MIN_LOW_THRESHOLD,
  type TrackingProfile,
  type RequestThresholds,
  type ProfileName,
} from "./profiles";
