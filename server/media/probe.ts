/**
 * What a media file is (ffprobe): container, size, duration, the first video stream that is not
 * cover art (size, rotation, display size, fps, frame count) and the first audio stream; and the
 * presentation time of every video frame, which frame-accurate editing relies on. Playlists (HLS),
 * SDP and text files are refused, since ffmpeg would open whatever files they name.
 *
 * Conventions: `rotation` is the clockwise rotation (0/90/180/270) a player applies to show the
 * picture upright (the `rotate` tag convention; ffprobe's Display Matrix "rotation" is the
 * counter-clockwise angle, so it is negated). `displayWidth/Height` are the upright size (pixel
 * aspect ratio is not applied). Images have `durationSeconds: null`, `fps: 0`, `frameCount: 1`, and
 * their rotation comes from the EXIF orientation (ffmpeg ignores it).
 */
import { stat } from "node:fs/promises";
import { ObscuraError } from "@/lib/errors";
import { redactPaths, runFfprobe } from "./ffmpeg";
import { imageInfo } from "./image";

export interface MediaInfo {
  kind: "video" | "image";
  /** Short container name: mp4, mov, webm, matroska, avi, jpeg, png, gif, webp, ... */
  container: string;
  sizeBytes: number;
  durationSeconds: number | null;
  bitRate: number | null;
  video: {
    codec: string;
    width: number;
    height: number;
    displayWidth: number;
    displayHeight: number;
    rotation: number;
    fps: number;
    frameCount: number;
    pixelFormat: string | null;
    startTime: number;
    /**
     * Variable frame rate (frame durations vary: phones, screen recordings): every decoder then
     * resamples to a constant `fps` (the average) with `cfrFilter`, so frame n is at n / fps in
     * detection, rendering and the output alike. Absent in state saved before it existed: false.
     */
    vfr?: boolean;
    /**
     * Pixel aspect ratio (sample aspect ratio) [num, den] when pixels are not square (anamorphic
     * DV, HDV, DVD). Boxes and display sizes stay in stored pixels; the output keeps the ratio, so
     * it plays as wide as the source. Absent: square pixels.
     */
    sar?: [number, number];
  };
  audio: { codec: string; channels: number; sampleRate: number; bitRate: number | null } | null;
}

interface FfStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  pix_fmt?: string;
  sample_aspect_ratio?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  nb_frames?: string;
  duration?: string;
  start_time?: string;
  bit_rate?: string;
  channels?: number;
  sample_rate?: string;
  tags?: Record<string, string>;
  side_data_list?: Array<{ side_data_type?: string; rotation?: number | string }>;
  disposition?: Record<string, number>;
}
interface FfFormat {
  format_name?: string;
  duration?: string;
  bit_rate?: string;
  tags?: Record<string, string>;
}

const IMAGE_FORMATS: Record<string, string> = {
  jpeg_pipe: "jpeg",
  png_pipe: "png",
  webp_pipe: "webp",
  gif_pipe: "gif",
  bmp_pipe: "bmp",
  tiff_pipe: "tiff",
};
const IMAGE_CODECS: Record<string, string> = { mjpeg: "jpeg", png: "png", webp: "webp", gif: "gif", bmp: "bmp", tiff: "tiff" };
/**
 * Demuxers never accepted for an input: playlists and session descriptions make ffmpeg open other
 * files or network addresses named inside the input (a known way to leak local files into an
 * output), tty turns text files into "video", lavfi/ffmetadata are not media.
 */
const REFUSED_FORMATS = new Set(["hls", "applehttp", "concat", "sdp", "rtp", "rtsp", "tty", "lavfi", "ffmetadata", "mpjpeg", "data"]);
/** Streams ffprobe reports as video that are not pictures (tty demuxer on .txt files, etc.). */
const NOT_PICTURES = new Set(["ansi", "bintext", "xbin", "idf"]);

export async function probe(file: string, opts: { signal?: AbortSignal } = {}): Promise<MediaInfo> {
  const sizeBytes = await stat(file).then(
    (s) => s.size,
    (e: NodeJS.ErrnoException) => {
      throw unreadable(e.code === "ENOENT" ? "no such file" : e.message);
    },
  );
  const res = await runFfprobe(["-v", "error", "-print_format", "json", "-show_format", "-show_streams", file], opts);
  if (res.code !== 0) throw unreadable(ffprobeReason(res.stderrLines, file));
  let parsed: { streams?: FfStream[]; format?: FfFormat };
  try {
    parsed = JSON.parse(res.stdout) as typeof parsed;
  } catch {
    throw unreadable("unparseable output");
  }
  const streams = parsed.streams ?? [];
  const format = parsed.format ?? {};
  const formatName = format.format_name ?? "";
  if (formatName.split(",").some((n) => REFUSED_FORMATS.has(n))) throw unreadable(`${formatName} inputs are not accepted`);
  const v = streams.find((s) => s.codec_type === "video" && !s.disposition?.attached_pic && !NOT_PICTURES.has(s.codec_name ?? ""));
  if (!v || !v.width || !v.height) throw unreadable("no video stream");
  const a = streams.find((s) => s.codec_type === "audio");
  const isImage =
    formatName in IMAGE_FORMATS ||
    (formatName === "image2" && (v.codec_name ?? "") in IMAGE_CODECS) ||
    (formatName === "gif" && num(v.nb_frames) !== null && num(v.nb_frames)! <= 1);
  const audio = a
    ? { codec: a.codec_name ?? "unknown", channels: a.channels ?? 0, sampleRate: num(a.sample_rate) ?? 0, bitRate: num(a.bit_rate) }
    : null;
  const base = { codec: v.codec_name ?? "unknown", width: v.width, height: v.height, pixelFormat: v.pix_fmt ?? null };

  if (isImage) {
    const rotation = await imageInfo(file).then(
      (i) => orientationToRotation(i.orientation),
      () => 0,
    );
    return {
      kind: "image",
      container: IMAGE_FORMATS[formatName] ?? IMAGE_CODECS[v.codec_name ?? ""] ?? formatName,
      sizeBytes,
      durationSeconds: null,
      bitRate: null,
      video: { ...base, ...displaySize(v.width, v.height, rotation), rotation, fps: 0, frameCount: 1, startTime: 0 },
      audio: null,
    };
  }

  const rotation = streamRotation(v);
  const fps = rate(v.avg_frame_rate) || rate(v.r_frame_rate);
  const durationSeconds = num(format.duration) ?? num(v.duration);
  const streamDuration = num(v.duration) ?? durationSeconds;
  const vfr = fps > 0 && (await variableFrameRate(file, fps, opts));
  // Resampled to `fps`, a VFR video has as many frames as its duration holds.
  const cfrCount = streamDuration !== null && fps > 0 ? Math.round(streamDuration * fps) : 0;
  const frameCount = vfr && cfrCount ? cfrCount : (num(v.nb_frames) ?? cfrCount);
  return {
    kind: "video",
    container: containerName(formatName, format, file),
    sizeBytes,
    durationSeconds,
    bitRate: num(format.bit_rate),
    video: { ...base, ...displaySize(v.width, v.height, rotation), rotation, fps, frameCount, startTime: num(v.start_time) ?? 0, vfr, ...sampleAspect(v.sample_aspect_ratio) },
    audio,
  };
}

/** `{sar: [n, d]}` for non-square pixels ("4:3"), nothing for square or unknown ("1:1", "0:1", absent). */
function sampleAspect(value: string | undefined): { sar?: [number, number] } {
  const m = /^(\d+):(\d+)$/.exec(value ?? "");
  if (!m) return {};
  const [n, d] = [Number(m[1]), Number(m[2])];
  return n > 0 && d > 0 && n !== d ? { sar: [n, d] } : {};
}

/** Packets read to tell a variable frame rate (the first ones: about 30 s at 30 fps). */
const VFR_SAMPLE_PACKETS = 900;

/**
 * Whether the first video stream's frame durations vary: at least 3, and more than 2%, of the gaps
 * between successive presentation times (the first VFR_SAMPLE_PACKETS packets) differ from 1 / fps
 * by more than a quarter.
 */
async function variableFrameRate(file: string, fps: number, opts: { signal?: AbortSignal }): Promise<boolean> {
  const res = await runFfprobe(
    ["-v", "error", "-select_streams", "V:0", "-read_intervals", `%+#${VFR_SAMPLE_PACKETS}`, "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", file],
    opts,
  );
  if (res.code !== 0) return false;
  const times = res.stdout
    .split("\n")
    .map((l) => l.trim().split(","))
    .filter(([t, flags]) => t && !flags?.includes("D"))
    .map(([t]) => Number(t))
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  if (times.length < 4) return false;
  const expected = 1 / fps;
  let off = 0;
  for (let i = 1; i < times.length; i++) if (Math.abs(times[i]! - times[i - 1]! - expected) > 0.25 * expected) off++;
  return off >= 3 && off / (times.length - 1) > 0.02; // one dropped frame does not make a VFR video
}

/** A frame rate as ffmpeg reads it best: exact NTSC fractions, integers, else 6 decimals. */
export function frameRateArg(fps: number): string {
  if (!(fps > 0) || !Number.isFinite(fps)) return "25";
  for (const base of [24, 30, 48, 60, 120, 240]) {
    if (Math.abs(fps - (base * 1000) / 1001) < 0.001) return `${base * 1000}/1001`;
  }
  if (Math.abs(fps - Math.round(fps)) < 0.001) return String(Math.round(fps));
  return fps.toFixed(6);
}

/**
 * The filter that puts a VFR video on a constant-rate timeline (frame n at n / fps, frames
 * repeated or dropped as the source's timing asks), first in every decoder's filter chain; null
 * for constant-rate videos (decoded as stored, vsync passthrough).
 */
export function cfrFilter(info: MediaInfo): string | null {
  return info.video?.vfr && info.video.fps > 0 ? `fps=${frameRateArg(info.video.fps)}` : null;
}

/**
 * Presentation time (seconds) of every video frame of the first video stream, ascending. Read from
 * packet timestamps (no decoding); packets flagged discard (before an edit list's start) are
 * skipped. Falls back to decoding frames when packets carry no timestamps.
 */
export async function probeFrameTimes(file: string, opts: { signal?: AbortSignal } = {}): Promise<number[]> {
  const fromPackets = await readTimes(file, "packet=pts_time,flags", opts);
  if (fromPackets) return fromPackets;
  return (await readTimes(file, "frame=best_effort_timestamp_time", opts)) ?? [];
}

async function readTimes(file: string, entries: string, opts: { signal?: AbortSignal }): Promise<number[] | null> {
  const res = await runFfprobe(["-v", "error", "-select_streams", "V:0", "-show_entries", entries, "-of", "csv=p=0", file], opts);
  if (res.code !== 0) throw unreadable(ffprobeReason(res.stderrLines, file));
  const times: number[] = [];
  for (const line of res.stdout.split("\n")) {
    const [t, flags] = line.trim().split(",");
    if (!t) continue;
    if (flags?.includes("D")) continue;
    const n = Number(t);
    if (!Number.isFinite(n)) return null;
    times.push(n);
  }
  return times.sort((x, y) => x - y);
}

export function orientationToRotation(orientation: number | null | undefined): number {
  switch (orientation) {
    case 3:
    case 4:
      return 180;
    case 5:
    case 6:
      return 90;
    case 7:
    case 8:
      return 270;
    default:
      return 0;
  }
}

/** Clockwise rotation for upright display, normalised to 0/90/180/270. */
export function streamRotation(s: Pick<FfStream, "side_data_list" | "tags">): number {
  const matrix = s.side_data_list?.find((d) => d.side_data_type === "Display Matrix" && d.rotation !== undefined);
  const cw = matrix ? -Number(matrix.rotation) : Number(s.tags?.rotate ?? 0);
  if (!Number.isFinite(cw)) return 0;
  return (((Math.round(cw / 90) * 90) % 360) + 360) % 360;
}

function displaySize(width: number, height: number, rotation: number) {
  return rotation === 90 || rotation === 270
    ? { displayWidth: height, displayHeight: width }
    : { displayWidth: width, displayHeight: height };
}

function containerName(formatName: string, format: FfFormat, file: string): string {
  if (formatName.startsWith("mov,mp4")) return format.tags?.major_brand?.trim() === "qt" ? "mov" : "mp4";
  if (formatName === "matroska,webm") return /\.webm$/i.test(file) ? "webm" : "matroska";
  return formatName.split(",")[0] || "unknown";
}

function rate(r: string | undefined): number {
  if (!r) return 0;
  const [n, d] = r.split("/").map(Number);
  const v = d === undefined ? n : d ? n / d : 0;
  return Number.isFinite(v) && v > 0 ? v : 0;
}

function num(s: string | number | undefined): number | null {
  if (s === undefined || s === "N/A" || s === "") return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/** The reason ffprobe gave, without the file path it prefixes. */
function ffprobeReason(stderrLines: string[], file: string): string {
  const lines = stderrLines.map((l) => l.trim()).filter(Boolean);
  const last = lines.at(-1) ?? "unknown error";
  const reason = last.startsWith(`${file}: `) ? last.slice(file.length + 2) : last;
  return redactPaths(reason, [file]);
}

function unreadable(reason: string): ObscuraError {
  return new ObscuraError("INVALID_ARGUMENT", `input is not a readable video or image (ffprobe: ${reason})`);
}
