/**
 * server/render — redaction drawn on pixels, and the rendered outputs (docs/rendering.md).
 *
 * - frame:  `Frame` views over RGB (rgb24) and YUV 4:2:0 (yuv420p) buffers, `planeColors`
 * - styles: `objectStyle(config, type)` (SMART's per-type rules), `blockSize` (box's longer side /
 *           10, 6, 4 for LOW, MEDIUM, HIGH), outline and feather widths, MOSAIC noise
 * - draw:   `redactFrame(frame, objects)`, `redactBox(...)`: BLUR, PIXELATE, MOSAIC, FILL, OUTLINE
 *           as RECTANGLE or ELLIPSE, in place, per box only (pure, no I/O)
 * - audio:  `audioMaskFilter(mask, params, audio)`: SILENCE, BEEP, SCRAMBLE as ffmpeg filters
 * - video:  `renderVideo(input, output, { info, tracks, config })`: decoder ffmpeg -> redact ->
 *           encoder ffmpeg through pipes, H.264/AAC MP4 with the source's fps, size, rotation
 * - image:  `redactImage(rgb, objects, style)`, `renderRedactedJpeg(...)` for images:process
 * - mp4:    `setMp4Rotation(file, rotation, size)`: the display matrix written in place
 */
export { rgbFrame, yuv420pFrame, frameBytes, parseColor, planeColors, type Frame, type Plane, type PixelFormat } from "./frame";
export {
  objectStyle,
  smartStyle,
  blockSize,
  outlineWidth,
  featherWidth,
  BLOCKS_ACROSS,
  MIN_BLOCK_PX,
  MOSAIC_NOISE,
  DEFAULT_STYLE,
  type StyleConfig,
  type ObjectStyle,
  type DrawStyle,
  type RedactionStyle,
  type RedactionShape,
  type Intensity,
} from "./styles";
export { redactFrame, redactBox, type RedactObject } from "./draw";
export { audioMaskFilter, scrambleSettings, MASK_AUDIO_DEFAULT_PARAMS, BEEP_HZ, BEEP_AMPLITUDE, INVERSION_BASE_HZ, type AudioMask } from "./audio";
export {
  renderVideo,
  buildDecoderArgs,
  buildEncoderArgs,
  frameObjects,
  drawnTracks,
  drawnBoxesAt,
  displayToStored,
  encodedSize,
  type RenderVideoOptions,
  type RenderVideoResult,
  type VideoRenderConfig,
} from "./video";
export { frameRateArg } from "../media/probe";
export { redactImage, renderRedactedJpeg, renderKey, objectKey } from "./image";
export { setMp4Rotation, rotationMatrix } from "./mp4";
