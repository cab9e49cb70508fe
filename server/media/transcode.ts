/**
 * Encoding the output video: MP4, H.264 (libx264, yuv420p, even dimensions, upright: ffmpeg's
 * autorotate applies the source rotation and the output carries none), `+faststart`, source
 * metadata dropped (it can hold locations and device names). Audio is copied when it already is
 * AAC, else encoded AAC 128 kb/s; no audio stream when the source has none. Every source frame is
 * kept with its timestamp (`-vsync passthrough`), so frame n of the output is frame n of the source.
 *
 * Quality mapping (RenderConfig.videoQuality 0..1 -> libx264 CRF): crf = round(40 - quality * 26),
 * so 0 -> 40 (smallest), 0.65 (the default) -> 23 (libx264's own default), 1 -> 14 (near lossless).
 *
 * This is the plain transcode (no redaction). MEDIA_RENDER goes through server/render/video.ts,
 * which reuses `videoQualityToCrf` and `VIDEO_PRESETS` and keeps the source's rotation instead.
 */
import { ObscuraError } from "@/lib/errors";
import { VIDEO_PRESETS } from "@/lib/api/video";
import { runFfmpeg } from "./ffmpeg";
import { cfrFilter, type MediaInfo } from "./probe";

export { VIDEO_PRESETS };
export type VideoPreset = (typeof VIDEO_PRESETS)[number];

/** videoQuality 0..1 (clamped) -> libx264 CRF 40..14. */
export function videoQualityToCrf(quality: number): number {
  if (!Number.isFinite(quality)) throw new ObscuraError("INVALID_ARGUMENT", `videoQuality must be a number between 0 and 1, not ${quality}`);
  const q = Math.min(1, Math.max(0, quality));
  return Math.round(40 - q * 26);
}

export interface TranscodeOptions {
  info: MediaInfo;
  quality: number;
  /** ULTRAFAST..VERYSLOW (any case). */
  preset: string;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/** Video filters applied to every (already upright) frame, in order (a VFR source first goes constant-rate). */
export function videoFilters(info?: MediaInfo): string[] {
  const cfr = info ? cfrFilter(info) : null;
  return [...(cfr ? [cfr] : []), "scale=trunc(iw/2)*2:trunc(ih/2)*2", "format=yuv420p"];
}

export function buildTranscodeArgs(input: string, output: string, opts: Pick<TranscodeOptions, "info" | "quality" | "preset">): string[] {
  const preset = opts.preset.toUpperCase();
  if (!(VIDEO_PRESETS as readonly string[]).includes(preset)) {
    throw new ObscuraError("INVALID_ARGUMENT", `videoPreset must be one of ${VIDEO_PRESETS.join(", ")}, not "${opts.preset}"`);
  }
  const audio = opts.info.audio;
  return [
    "-i", input,
    "-map", "0:V:0", // V: video that is not cover art
    ...(audio ? ["-map", "0:a:0"] : []),
    "-map_metadata", "-1",
    "-map_chapters", "-1",
    "-vf", videoFilters(opts.info).join(","),
    "-vsync", "passthrough",
    "-c:v", "libx264",
    "-preset", preset.toLowerCase(),
    "-crf", String(videoQualityToCrf(opts.quality)),
    "-pix_fmt", "yuv420p",
    ...(audio ? (audio.codec === "aac" ? ["-c:a", "copy"] : ["-c:a", "aac", "-b:a", "128k"]) : ["-an"]),
    "-sn", "-dn",
    "-max_muxing_queue_size", "1024",
    "-movflags", "+faststart",
    "-f", "mp4",
    output,
  ];
}

export async function transcodeVideo(input: string, output: string, opts: TranscodeOptions): Promise<void> {
  if (opts.info.kind !== "video") throw new ObscuraError("INVALID_ARGUMENT", "only videos can be transcoded; images are rendered as JPEG");
  const args = buildTranscodeArgs(input, output, opts);
  await runFfmpeg(args, { signal: opts.signal, durationSeconds: opts.info.durationSeconds ?? undefined, onProgress: opts.onProgress });
}
