/**
 * Detection over a whole video: frames decoded at the profile's stride (and scaled so the longer
 * side is at most OBSCURA_DETECT_MAX_SIDE, default 1920), detected, joined into tracks by the
 * tracker, then mapped back to display pixels of the source. Reports progress by frames.
 *
 * Which detector passes run on which detection frame: `schedule` "sweep" (the default,
 * schedule.ts: cheap passes every detection frame, expensive ones round-robin over the frame and
 * around live tracks) or "full" (every pass on every detection frame, as for a still image; set
 * OBSCURA_VIDEO_SCHEDULE=full to get it back without a code change). Decoding runs ahead of
 * detection in ffmpeg's own process (frames.ts prefetch).
 */
import type { MediaInfo } from "../media";
import { decodeFrames, frameSize } from "../media";
import { Tracker, detectorThreshold, trackingProfile, trackerParams, type Track } from "../tracking";
import { detectImage, featureSupport, type EngineSettings } from "./engine";
import { VideoSchedule, extendHead, type ScheduleOptions } from "./schedule";
import type { Detection } from "./types";

export interface VideoDetectionResult {
  tracks: Track[];
  detectors: string[];
  missingFeatures: string[];
  profile: { name: string; detectionStride: number };
  framesDetected: number;
  detections: number;
}

export async function detectVideo(
  file: string,
  media: MediaInfo,
  features: readonly string[],
  settings: EngineSettings & { profileName: string },
  opts: {
    signal?: AbortSignal;
    onProgress?: (fraction: number) => void;
    /** "sweep" (default) or "full"; see the header. */
    schedule?: "sweep" | "full";
    scheduleOptions?: Partial<ScheduleOptions>;
  } = {},
): Promise<VideoDetectionResult> {
  const support = featureSupport(features);
  const fps = media.video.fps > 0 ? media.video.fps : 25;
  const profile = trackingProfile(settings.profileName, fps);
  const empty = { detectors: support.detectors, missingFeatures: support.missing, profile: { name: profile.name, detectionStride: profile.detectionStride } };
  if (!support.supported.length) return { tracks: [], framesDetected: 0, detections: 0, ...empty };
  const thresholds = { objects: settings.objectsConfidenceThreshold, inner: settings.innerObjectsConfidenceThreshold };
  const tracker = new Tracker(trackerParams(profile, thresholds));
  // Detectors run below the request's thresholds so that weak detections can extend tracks.
  const scoreFactor = detectorThreshold(profile, 1);
  const maxSide = Number(process.env.OBSCURA_DETECT_MAX_SIDE) || 1920;
  const frameCount = Math.max(1, media.video.frameCount);
  let framesDetected = 0;
  let detections = 0;
  let lastFrame = 0;
  const mode = opts.schedule ?? (process.env.OBSCURA_VIDEO_SCHEDULE === "full" ? "full" : "sweep");
  const size = frameSize(media, maxSide);
  const schedule =
    mode === "sweep" && support.supported.some((f) => f === "FACE_DETECTION" || f === "LICENSE_PLATE_DETECTION")
      ? new VideoSchedule(size, profile.detectionStride / fps, profile.maxMissedFrames / fps, support.supported, opts.scheduleOptions)
      : null;
  for await (const frame of decodeFrames(file, media, { stride: profile.detectionStride, maxSide, signal: opts.signal })) {
    const detectors = schedule?.detectors(framesDetected);
    const found = await detectImage(frame.image, support.supported, settings, { scoreFactor, detectors });
    const scaled: Detection[] = found.map((d) => ({
      ...d,
      box: { x: d.box.x * frame.scale, y: d.box.y * frame.scale, width: d.box.width * frame.scale, height: d.box.height * frame.scale },
    }));
    const live = tracker.update(frame.index, scaled);
    schedule?.observe(live);
    framesDetected++;
    detections += scaled.length;
    lastFrame = frame.index;
    opts.onProgress?.(Math.min(1, (frame.index + 1) / frameCount));
  }
  let tracks = tracker.finish({ frameCount: Math.max(frameCount, lastFrame + 1) });
  if (schedule) tracks = tracks.map((t) => extendHead(t, schedule.headFrames(t.type, profile.detectionStride)));
  return { tracks, framesDetected, detections, ...empty };
}
