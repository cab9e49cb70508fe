/**
 * Rendering a redacted video: ffmpeg decodes the source to raw YUV 4:2:0 on its stdout, each
 * frame is redacted in place in Node (draw.ts) with the boxes of the session's tracks on that
 * frame, and a second ffmpeg encodes the frames from its stdin to H.264 in MP4, taking the
 * source's audio (copied, re-encoded or masked) directly from the source file as a second input.
 *
 * - Memory is flat: two frame buffers alternate (one is being written to the encoder while the
 *   next is filled and redacted); reading the decoder waits for the encoder (backpressure).
 *   The decoder's stdout is a Unix socket that Node reads straight into the frame buffers
 *   (frameSocket: no per-chunk Buffers, no copies); a plain stdout pipe read as a stream where
 *   that socket cannot be made. Nothing is written to disk but the output.
 * - Frames stay as stored (no autorotate): the output has the source's coded size (an odd width or
 *   height loses its last column/row: H.264 4:2:0 needs even sizes), frame rate and rotation (the
 *   display matrix is written back after encoding, mp4.ts). Track boxes, in upright display
 *   pixels, are turned into stored-frame pixels.
 * - Frame n of the decoder is frame n of the tracks (-vsync passthrough, as detection decodes; a
 *   variable-frame-rate source is resampled to its average rate first, by both: cfrFilter).
 *   The output is constant frame rate at the source's average rate; the video keeps its start
 *   offset against the audio.
 * - videoQuality -> CRF (server/media/transcode.ts: crf = round(40 - 26 q)), videoPreset -> x264
 *   preset. Audio: none when the source has none; copied when AAC and not masked; else AAC
 *   128 kb/s, through the mask's filter (audio.ts) when maskAudio is set.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { ObscuraError } from "@/lib/errors";
import type { Box } from "@/lib/geometry";
import type { VideoJobSpec } from "@/lib/api/video";
import { ffmpegPath } from "../media/binaries";
import { redactPaths, runFfprobe } from "../media/ffmpeg";
import { cfrFilter, frameRateArg, type MediaInfo } from "../media/probe";
import { videoQualityToCrf, VIDEO_PRESETS } from "../media/transcode";
import { boxAt, trackBoxesByFrame, type Track, type TrackBox } from "../tracking";
import { audioMaskFilter } from "./audio";
import { redactFrame, type RedactObject } from "./draw";
import { frameBytes, yuv420pFrame } from "./frame";
import { objectKey, renderKey } from "./image";
import { setMp4Rotation } from "./mp4";
import { objectStyle, type StyleConfig } from "./styles";

export type VideoRenderConfig = VideoJobSpec["render"];

export interface RenderVideoOptions {
  info: MediaInfo;
  /** The session's tracks (detections.json); tracks with `enabled: false` are not drawn. */
  tracks: readonly Track[];
  /** Size the track boxes are measured in (detections.json width/height); default the display size. */
  boxSpace?: { width: number; height: number };
  config: VideoRenderConfig;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

export interface RenderVideoResult {
  frames: number;
  /** Wall time of the whole render, and the part spent redacting pixels in Node. */
  seconds: number;
  redactSeconds: number;
}

/** A box in upright display pixels -> the same box in stored-frame pixels (rotation clockwise). */
export function displayToStored(b: Box, rotation: number, storedWidth: number, storedHeight: number): Box {
  switch (rotation) {
    case 90:
      return { x: b.y, y: storedHeight - b.x - b.width, width: b.height, height: b.width };
    case 180:
      return { x: storedWidth - b.x - b.width, y: storedHeight - b.y - b.height, width: b.width, height: b.height };
    case 270:
      return { x: storedWidth - b.y - b.height, y: b.x, width: b.height, height: b.width };
    default:
      return { ...b };
  }
}

/** The tracks the renderer draws: enabled (`enabled` absent or true) and with keyframes. */
export function drawnTracks(tracks: readonly Track[]): Track[] {
  return tracks.filter((t) => t.enabled !== false && t.keyframes.length > 0);
}

/**
 * The boxes the renderer draws on frame `frame`, in the tracks' box space (detections.json
 * pixels), before they are turned into stored-frame pixels: the same boxes `frameObjects` yields
 * for that frame (boxAt interpolates exactly as trackBoxesByFrame does). Used by the leak check.
 */
export function drawnBoxesAt(tracks: readonly Track[], frame: number): TrackBox[] {
  const out: TrackBox[] = [];
  for (const t of drawnTracks(tracks)) {
    const box = boxAt(t, frame);
    if (box) out.push({ trackId: t.id, type: t.type, box });
  }
  return out;
}

/**
 * Per-frame objects to draw, in stored-frame pixels: a generator to pull once per decoded frame.
 * Track boxes interpolate between keyframes (tracking/boxAt); disabled tracks are skipped.
 */
export function* frameObjects(
  tracks: readonly Track[],
  info: MediaInfo,
  style: StyleConfig,
  key: number,
  boxSpace = { width: info.video.displayWidth, height: info.video.displayHeight },
): Generator<RedactObject[]> {
  const live = drawnTracks(tracks);
  const sx = boxSpace.width > 0 ? info.video.displayWidth / boxSpace.width : 1;
  const sy = boxSpace.height > 0 ? info.video.displayHeight / boxSpace.height : 1;
  const styles = new Map(live.map((t) => [t.id, { style: objectStyle(style, t.type), key: objectKey(key, t.id) }]));
  for (const { boxes } of trackBoxesByFrame(live, Number.MAX_SAFE_INTEGER)) {
    yield boxes.map((b) => {
      const display = { x: b.box.x * sx, y: b.box.y * sy, width: b.box.width * sx, height: b.box.height * sy };
      const s = styles.get(b.trackId)!;
      return { box: displayToStored(display, info.video.rotation, info.video.width, info.video.height), style: s.style, key: s.key };
    });
  }
}

/** Even stored size (what is encoded). */
export function encodedSize(info: MediaInfo): { width: number; height: number } {
  return { width: Math.max(2, info.video.width - (info.video.width % 2)), height: Math.max(2, info.video.height - (info.video.height % 2)) };
}

export function buildDecoderArgs(input: string, info: MediaInfo): string[] {
  const { width, height } = encodedSize(info);
  const filters = [cfrFilter(info), width !== info.video.width || height !== info.video.height ? `crop=${width}:${height}:0:0` : null].filter(Boolean);
  const crop = filters.length ? ["-vf", filters.join(",")] : [];
  return [
    "-nostdin", "-hide_banner", "-loglevel", "error",
    "-noautorotate",
    "-i", input,
    "-map", "0:V:0",
    ...crop,
    "-vsync", "passthrough",
    "-f", "rawvideo", "-pix_fmt", "yuv420p",
    "pipe:1",
  ];
}

export function buildEncoderArgs(input: string, output: string, info: MediaInfo, config: VideoRenderConfig, videoOffsetSeconds = 0): string[] {
  const preset = String(config.videoPreset).toUpperCase();
  if (!(VIDEO_PRESETS as readonly string[]).includes(preset)) {
    throw new ObscuraError("INVALID_ARGUMENT", `videoPreset must be one of ${VIDEO_PRESETS.join(", ")}, not "${config.videoPreset}"`);
  }
  const { width, height } = encodedSize(info);
  const audio = info.audio;
  const filter = audio ? audioMaskFilter(config.maskAudio, config.maskAudioParams, audio) : null;
  const audioArgs = !audio ? ["-an"] : filter ? ["-af", filter, "-c:a", "aac", "-b:a", "128k"] : audio.codec === "aac" ? ["-c:a", "copy"] : ["-c:a", "aac", "-b:a", "128k"];
  return [
    "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
    "-f", "rawvideo", "-pix_fmt", "yuv420p", "-video_size", `${width}x${height}`, "-framerate", frameRateArg(info.video.fps),
    ...(videoOffsetSeconds > 0.0005 ? ["-itsoffset", videoOffsetSeconds.toFixed(6)] : []),
    "-i", "pipe:0",
    ...(audio ? ["-i", input] : []),
    "-map", "0:v:0",
    ...(audio ? ["-map", "1:a:0"] : []),
    ...(info.video.sar ? ["-vf", `setsar=${info.video.sar[0]}/${info.video.sar[1]}`] : []),
    "-map_metadata", "-1",
    "-map_chapters", "-1",
    "-vsync", "passthrough",
    "-c:v", "libx264",
    "-preset", preset.toLowerCase(),
    "-crf", String(videoQualityToCrf(config.videoQuality)),
    "-pix_fmt", "yuv420p",
    ...audioArgs,
    "-sn", "-dn",
    "-max_muxing_queue_size", "1024",
    "-movflags", "+faststart",
    "-f", "mp4",
    output,
  ];
}

/** Start of the video stream after the file's start (what ffmpeg subtracts from every stream). */
async function videoOffset(input: string, info: MediaInfo, signal?: AbortSignal): Promise<number> {
  if (!info.audio) return 0;
  const res = await runFfprobe(["-v", "error", "-show_entries", "format=start_time", "-of", "csv=p=0", input], { signal });
  const start = Number(res.stdout.trim());
  if (res.code !== 0 || !Number.isFinite(start)) return 0;
  return Math.max(0, info.video.startTime - start);
}

interface Child {
  proc: ChildProcess;
  stderr: string[];
  exit: Promise<number | null>;
}

function start(args: string[], stdin: "pipe" | "ignore", stdout: "pipe" | "ignore" | net.Socket): Child {
  const proc = spawn(ffmpegPath(), args, { stdio: [stdin, stdout, "pipe"] });
  const stderr: string[] = [];
  proc.stderr!.on("data", (b: Buffer) => {
    stderr.push(...b.toString("utf8").split(/\r?\n/).filter(Boolean));
    if (stderr.length > 20) stderr.splice(0, stderr.length - 20);
  });
  const exit = new Promise<number | null>((resolve) => {
    proc.once("error", () => resolve(-1));
    proc.once("close", (code) => resolve(code));
  });
  return { proc, stderr, exit };
}

/**
 * A connected pair of Unix sockets for the decoder's output: `writer` becomes the decoder's stdout
 * and `reader` receives the frames through net's `onread`, straight into the frame buffers. Read
 * as a stream instead, every 64 KiB chunk is a new Buffer (allocation, page faults, GC) plus a
 * copy: several ms of CPU per 1080p frame. Null where the pair cannot be made (Windows, no
 * usable temp dir): the decoder's stdout pipe is read as a stream then. The socket lives in a
 * fresh 0700 directory (only this user can connect) that is removed once connected.
 */
async function frameSocket(onread: net.OnReadOpts): Promise<{ reader: net.Socket; writer: net.Socket } | null> {
  if (process.platform === "win32") return null;
  let dir: string | null = null;
  let server: net.Server | null = null;
  let reader: net.Socket | null = null;
  try {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "obscura-render-"));
    const file = path.join(dir, "frames.sock");
    const srv = (server = net.createServer({ pauseOnConnect: true }));
    await new Promise<void>((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(file, () => resolve());
    });
    const accepted = new Promise<net.Socket>((resolve) => srv.once("connection", resolve));
    const r = (reader = net.connect({ path: file, onread }));
    await new Promise<void>((resolve, reject) => {
      r.once("connect", resolve);
      r.once("error", reject);
    });
    return { reader: r, writer: await accepted };
  } catch {
    reader?.destroy();
    return null;
  } finally {
    server?.close();
    if (dir) await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

function write(stream: Writable, buf: Buffer): Promise<void> {
  const p = new Promise<void>((resolve, reject) => stream.write(buf, (err) => (err ? reject(err) : resolve())));
  p.catch(() => {}); // awaited later; an encoder that died is reported by its exit code
  return p;
}

export async function renderVideo(input: string, output: string, opts: RenderVideoOptions): Promise<RenderVideoResult> {
  const { info, config, signal } = opts;
  if (info.kind !== "video") throw new ObscuraError("INVALID_ARGUMENT", "only videos can be rendered as MP4; images are rendered as JPG");
  if (signal?.aborted) throw new ObscuraError("CANCELLED", "rendering was cancelled");
  const t0 = performance.now();
  const { width, height } = encodedSize(info);
  const size = frameBytes("yuv420p", width, height);
  const encArgs = buildEncoderArgs(input, output, info, config, await videoOffset(input, info, signal));
  const decArgs = buildDecoderArgs(input, info);
  const objects = frameObjects(opts.tracks, info, config, renderKey(), opts.boxSpace);

  // Two frame buffers alternate: buffers[cur] is being filled from the decoder while the other one
  // is being written to the encoder; reading waits when the encoder has not taken it yet.
  const buffers = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
  const inFlight: Array<Promise<void> | null> = [null, null];
  let cur = 0;
  let filled = 0;
  let frames = 0;
  let redactMs = 0;
  const total = info.video.frameCount;
  let failure: unknown = null;
  let fraction = 0;
  /** buffers[cur] holds a whole frame: redact it, send it, switch; resolves when the next buffer is free (null: free now). */
  const frameDone = (): Promise<void> | null => {
    const buf = buffers[cur]!;
    const list = objects.next().value ?? [];
    if (list.length) {
      const t = performance.now();
      redactFrame(yuv420pFrame(buf, width, height), list);
      redactMs += performance.now() - t;
    }
    inFlight[cur] = write(stdin, buf);
    cur ^= 1;
    filled = 0;
    frames++;
    // Frames make 0..0.99 (scaled, not clamped: the last 1 % of frames still moves it), the
    // encoder's finish the last 0.01.
    if (total > 0) opts.onProgress?.((fraction = Math.min(0.99, (0.99 * frames) / total)));
    const next = inFlight[cur];
    if (!next) return null;
    const slot = cur;
    return next.then(() => {
      inFlight[slot] = null;
    });
  };

  const enc = start(encArgs, "pipe", "ignore");
  const stdin = enc.proc.stdin!;
  stdin.on("error", () => {}); // EPIPE when the encoder stops early: its exit code tells why
  let dec: Child | null = null;
  let reader: net.Socket | null = null;
  let aborted = false;
  const kill = () => {
    for (const c of [dec, enc]) if (c && c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill("SIGKILL");
  };
  const fail = (e: unknown) => {
    failure ??= e;
    kill();
    reader?.destroy();
  };
  const onAbort = () => {
    aborted = true;
    kill();
    reader?.destroy();
  };
  signal?.addEventListener("abort", onAbort, { once: true });

  const pair = await frameSocket({
    buffer: () => buffers[cur]!.subarray(filled),
    callback: (n: number) => {
      if (failure) return false;
      filled += n;
      if (filled < size) return true;
      try {
        const wait = frameDone();
        if (!wait) return true;
        wait.then(() => reader?.resume(), fail);
        return false; // paused until the encoder has taken the other buffer
      } catch (e) {
        fail(e);
        return false;
      }
    },
  });
  let readerClosed: Promise<void> = Promise.resolve();
  if (pair) {
    const r = (reader = pair.reader);
    readerClosed = new Promise<void>((resolve) => r.once("close", () => resolve()));
    r.on("error", (e) => {
      if (!aborted) failure ??= e;
    });
    try {
      if (!aborted) dec = start(decArgs, "ignore", pair.writer);
    } finally {
      pair.writer.destroy(); // the decoder has its own copy: EOF comes when it exits
    }
    if (aborted) r.destroy();
    else r.resume();
  } else if (!aborted) {
    dec = start(decArgs, "ignore", "pipe");
  }

  try {
    if (reader) {
      await readerClosed;
    } else if (dec) {
      for await (const chunk of dec.proc.stdout! as Readable) {
        const data = chunk as Buffer;
        let off = 0;
        while (off < data.length) {
          const n = Math.min(size - filled, data.length - off);
          data.copy(buffers[cur]!, filled, off, off + n);
          filled += n;
          off += n;
          if (filled < size) continue;
          const wait = frameDone();
          if (wait) await wait;
        }
      }
    }
    await Promise.all(inFlight);
  } catch (e) {
    fail(e);
  }
  stdin.end();
  // The encoder's finish (flushing, then +faststart moving the index to the front: one more pass
  // over the whole output, ~1 s per GB here) reports nothing: meanwhile the last fraction is
  // repeated every 0.5 s, so a long finish is not mistaken for a stall.
  const heartbeat = opts.onProgress && frames > 0 && total > 0 ? setInterval(() => opts.onProgress?.(fraction), 500) : null;
  try {
    const [decCode, encCode] = await Promise.all([dec?.exit ?? null, enc.exit]);
    signal?.removeEventListener("abort", onAbort);
    if (aborted || signal?.aborted) throw new ObscuraError("CANCELLED", "rendering was cancelled");
    const quote = (c: Child, args: string[]) => redactPaths(c.stderr.slice(-3).join("; "), args) || "no error output";
    if (encCode !== 0) throw new ObscuraError("INTERNAL", `ffmpeg could not encode the redacted video (exit code ${encCode}): ${quote(enc, encArgs)}`);
    if (dec && decCode !== 0) throw new ObscuraError("INVALID_ARGUMENT", `ffmpeg could not decode the video for rendering (exit code ${decCode}): ${quote(dec, decArgs)}`);
    if (failure) throw new ObscuraError("INTERNAL", `rendering failed: ${failure instanceof Error ? failure.message : String(failure)}`, { cause: failure });
    if (frames === 0) throw new ObscuraError("INVALID_ARGUMENT", "the video has no frames to render");
    if (info.video.rotation) await setMp4Rotation(output, info.video.rotation, { width, height });
  } finally {
    if (heartbeat) clearInterval(heartbeat);
  }
  opts.onProgress?.(1);
  return { frames, seconds: (performance.now() - t0) / 1000, redactSeconds: redactMs / 1000 };
}
