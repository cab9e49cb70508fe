/**
 * server/media — everything that reads or writes media files.
 *
 * - binaries:   `ffmpegPath()`, `ffprobePath()` (env OBSCURA_FFMPEG / OBSCURA_FFPROBE, else the
 *               static builds from @ffmpeg-installer / @ffprobe-installer)
 * - ffmpeg:     `runFfmpeg(args, { signal, durationSeconds, onProgress })` — generic runner with
 *               progress 0..1, SIGKILL on abort (CANCELLED), stderr tail in errors; `runFfprobe`
 * - probe:      `probe(file)` -> MediaInfo (kind, container, duration, upright display size,
 *               rotation, fps, frame count, audio); `probeFrameTimes(file)` -> every frame's time
 * - hash:       `hashFile(file, ["md5","sha1","sha256","sha512"])` in one streaming pass
 * - thumbnails: `makeThumbnails(file, outDir, info)` -> thumb-0001.jpg... plus poster.jpg
 * - transcode:  `transcodeVideo(input, output, { info, quality, preset })` -> H.264/AAC MP4;
 *               `videoQualityToCrf(q)` = round(40 - q*26) (0.65 -> 23); `buildTranscodeArgs`
 * - image:      `imageInfo(file)` (size after EXIF orientation), `renderImageJpeg(in, out, { quality })`
 *               with JPEG quality = round(q*100) clamped to 1..100
 */
export { ffmpegPath, ffprobePath } from "./binaries";
export { runFfmpeg, runFfprobe, type RunFfmpegOptions, type ProcessResult } from "./ffmpeg";
export { probe, probeFrameTimes, orientationToRotation, cfrFilter, frameRateArg, type MediaInfo } from "./probe";
export { hashFile, HASH_TYPES, type HashType } from "./hash";
export { makeThumbnails, thumbnailTimes, thumbnailName, POSTER_FILE, type Thumbnail, type ThumbnailOptions } from "./thumbnails";
export {
  transcodeVideo,
  buildTranscodeArgs,
  videoFilters,
  videoQualityToCrf,
  VIDEO_PRESETS,
  type VideoPreset,
  type TranscodeOptions,
} from "./transcode";
export { imageInfo, renderImageJpeg, imageQualityToJpeg, decodeImageRgb, type ImageInfo } from "./image";
export { decodeFrames, frameSize, type DecodedFrame, type FrameOptions } from "./frames";
