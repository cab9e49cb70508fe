/**
 * Frame sources of the pipeline's entry points (docs/pipeline.md#entry-points), each an async
 * generator of RGB frames with their time:
 *
 *   file    File / GstFile: a video or image file, every frame or `fpsLimit` per second
 *   loop    ImageLoop: one image decoded once and handed out `loopCount` times (0: until stopped)
 *   folder  FolderWatch: files appearing in a folder (polled every `watchPollMs`; a file is taken
 *           when its size stopped changing), oldest first, each a new input
 *   rtsp    RTSP / GstRTSP: ffmpeg reading the stream (`rtspUseTCP`, `rtspTimeoutMs`,
 *           `hardwareDecoderType`), `fpsLimit` frames per second at most `resizeToSize` pixels high,
 *           through a lossy queue of `maxQueueSize` frames (full: the oldest frame is dropped; 0:
 *           no queue, the reader waits for the pipeline); a lost stream is reopened up to
 *           `rtspRetryCount` times in a row; `recordTo` keeps the stream as MP4 segments of
 *           `recordInterval` ms, each reported when complete.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { decodeFrames, probe } from "../media";
import { ffmpegPath } from "../media/binaries";
import { FrameCutter } from "../media/frames";
import type { RgbImage } from "../vision/types";
import type { PipelineConfig } from "./config";

export interface SourceFrame {
  image: RgbImage;
  /** The frame's time (ms since the epoch). */
  timeMs: number;
  /** What the frame came from (the file, the URL without credentials). */
  input: string;
  /** First frame of a new input (FolderWatch). */
  newInput: boolean;
  /** Frame rate of the input (for the tracker). */
  fps: number;
}

export interface SourceStats {
  framesRead: number;
  framesDropped: number;
  reconnects: number;
  inputs: number;
  queueLength: number;
}

export interface RecordedSegment {
  file: string;
  startMs: number;
  durationMs: number;
}

export interface SourceOptions {
  signal: AbortSignal;
  stats: SourceStats;
  /** Called for each complete recording segment (RTSP recordTo). */
  onSegment?: (s: RecordedSegment) => void;
  log?: (msg: string, fields: Record<string, unknown>) => void;
}

const VIDEO_OR_IMAGE = /\.(mp4|mov|mkv|avi|webm|m4v|ts|mpg|mpeg|flv|wmv|3gp|jpg|jpeg|png|bmp|webp|tif|tiff|gif)$/i;

export const safeUrl = (u: string) => u.replace(/\/\/([^/@]*)@/, "//***@");

export function frameSource(c: PipelineConfig, o: SourceOptions): AsyncGenerator<SourceFrame> {
  switch (c.source) {
    case "file":
      return fileFrames(c, c.VIDEO_IN, Date.parse(c.startTime ?? "") || Date.now(), o, true);
    case "loop":
      return loopFrames(c, o);
    case "folder":
      return folderFrames(c, o);
    case "rtsp":
      return rtspFrames(c, o);
    default:
      throw new ObscuraError("INVALID_ARGUMENT", "the Direct entry point takes frames from its caller (Pipeline.process), not from VIDEO_IN");
  }
}

async function* fileFrames(c: PipelineConfig, file: string, startMs: number, o: SourceOptions, first: boolean): AsyncGenerator<SourceFrame> {
  const info = await probe(file, { signal: o.signal });
  if (!info.video) throw new ObscuraError("INVALID_ARGUMENT", `VIDEO_IN ${JSON.stringify(file)} has no video stream or image`);
  const fps = info.video.fps || 25;
  const stride = c.fpsLimit > 0 ? Math.max(1, Math.round(fps / c.fpsLimit)) : 1;
  let newInput = first;
  o.stats.inputs++;
  for await (const f of decodeFrames(file, info, { stride, signal: o.signal })) {
    o.stats.framesRead++;
    yield { image: f.image, timeMs: startMs + Math.round((f.index / fps) * 1000), input: file, newInput, fps: fps / stride };
    newInput = false;
  }
}

async function* loopFrames(c: PipelineConfig, o: SourceOptions): AsyncGenerator<SourceFrame> {
  const info = await probe(c.VIDEO_IN, { signal: o.signal });
  if (!info.video) throw new ObscuraError("INVALID_ARGUMENT", `VIDEO_IN ${JSON.stringify(c.VIDEO_IN)} is not an image`);
  let image: RgbImage | null = null;
  for await (const f of decodeFrames(c.VIDEO_IN, info, { count: 1, signal: o.signal })) image = f.image;
  if (!image) throw new ObscuraError("INVALID_ARGUMENT", `VIDEO_IN ${JSON.stringify(c.VIDEO_IN)} has no picture`);
  o.stats.inputs = 1;
  for (let i = 0; c.loopCount === 0 || i < c.loopCount; i++) {
    if (o.signal.aborted) return;
    o.stats.framesRead++;
    yield { image, timeMs: Date.now(), input: c.VIDEO_IN, newInput: i === 0, fps: 25 };
  }
}

async function* folderFrames(c: PipelineConfig, o: SourceOptions): AsyncGenerator<SourceFrame> {
  const done = new Set<string>();
  const sizes = new Map<string, number>();
  let idleSince = Date.now();
  while (!o.signal.aborted) {
    const ready: Array<{ file: string; mtime: number }> = [];
    for (const name of fs.readdirSync(c.VIDEO_IN)) {
      if (!VIDEO_OR_IMAGE.test(name) || name.startsWith(".")) continue;
      const file = path.join(c.VIDEO_IN, name);
      let st: fs.Stats;
      try {
        st = fs.statSync(file);
      } catch {
        continue;
      }
      const key = `${file}:${st.mtimeMs}:${st.size}`;
      if (!st.isFile() || done.has(key)) continue;
      // taken once its size held still between two scans (a copy in progress is left alone)
      if (sizes.get(file) === st.size) ready.push({ file, mtime: st.mtimeMs });
      sizes.set(file, st.size);
    }
    ready.sort((a, b) => a.mtime - b.mtime || a.file.localeCompare(b.file));
    for (const r of ready) {
      if (o.signal.aborted) return;
      const st = fs.statSync(r.file);
      done.add(`${r.file}:${st.mtimeMs}:${st.size}`);
      sizes.delete(r.file);
      try {
        yield* fileFrames(c, r.file, Date.now(), o, true);
      } catch (e) {
        if (o.signal.aborted) return;
        o.log?.("folder input skipped", { file: r.file, error: (e as Error).message });
      }
      idleSince = Date.now();
    }
    if (c.watchIdleStopMs > 0 && Date.now() - idleSince >= c.watchIdleStopMs) return;
    await sleep(c.watchPollMs, o.signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Width and height of an RTSP stream: ffmpeg opens it (same transport and timeout) and reports its video stream. */
async function probeStream(c: PipelineConfig, signal: AbortSignal): Promise<{ width: number; height: number }> {
  const args = ["-nostdin", "-hide_banner", "-rtsp_transport", c.rtspUseTCP ? "tcp" : "udp", "-stimeout", String(c.rtspTimeoutMs * 1000), "-i", c.VIDEO_IN, "-map", "0:v:0", "-frames:v", "1", "-f", "null", "-"];
  const { stderr } = await run(ffmpegPath(), args, signal, c.rtspTimeoutMs + 5000);
  const m = /Stream #\S+.*Video: [^\n]*?, (\d{2,5})x(\d{2,5})/.exec(stderr);
  if (!m) throw new Error("the stream has no video");
  return { width: Number(m[1]), height: Number(m[2]) };
}

function run(bin: string, args: string[], signal: AbortSignal, timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (err = (err + b.toString()).slice(-20_000)));
    const kill = () => child.kill("SIGKILL");
    const t = setTimeout(kill, timeoutMs);
    signal.addEventListener("abort", kill, { once: true });
    child.on("close", (code) => {
      clearTimeout(t);
      signal.removeEventListener("abort", kill);
      if (code === 0) resolve({ stdout: out, stderr: err });
      else reject(new Error(safeUrl(err.trim().split("\n").slice(-1).join(" ")) || (code === null ? `no answer within ${timeoutMs} ms` : `exit ${code}`)));
    });
  });
}

async function* rtspFrames(c: PipelineConfig, o: SourceOptions): AsyncGenerator<SourceFrame> {
  let failures = 0;
  let lastError = "";
  const url = safeUrl(c.VIDEO_IN);
  o.stats.inputs = 1;
  let first = true;
  while (!o.signal.aborted) {
    let got = 0;
    try {
      const size = await probeStream(c, o.signal);
      const h = c.resizeToSize > 0 ? Math.min(size.height, c.resizeToSize) : size.height;
      const height = Math.max(2, Math.round(h / 2) * 2);
      const width = Math.max(2, Math.round((size.width * (height / size.height)) / 2) * 2);
      for await (const image of rtspSession(c, { width, height }, o)) {
        got++;
        yield { image, timeMs: Date.now(), input: url, newInput: first, fps: c.fpsLimit || 25 };
        first = false;
      }
      if (o.signal.aborted) return;
      lastError = "the stream ended";
    } catch (e) {
      if (o.signal.aborted) return;
      lastError = (e as Error).message;
    }
    failures = got > 0 ? 1 : failures + 1;
    if (failures > c.rtspRetryCount) {
      throw new ObscuraError("UNAVAILABLE", `RTSP source ${url} lost: ${lastError} (${c.rtspRetryCount} reconnection attempt${c.rtspRetryCount === 1 ? "" : "s"} failed; rtspRetryCount)`);
    }
    o.stats.reconnects++;
    o.log?.("rtsp reconnecting", { url, attempt: failures, of: c.rtspRetryCount, reason: lastError });
    await sleep(Math.min(5000, 500 * failures), o.signal);
  }
}

/** One connection: ffmpeg's frames through the lossy queue; ends when the stream does. */
async function* rtspSession(c: PipelineConfig, size: { width: number; height: number }, o: SourceOptions): AsyncGenerator<RgbImage> {
  const hw = c.hardwareDecoderType && c.hardwareDecoderType.toLowerCase() !== "none" ? ["-hwaccel", c.hardwareDecoderType] : [];
  const filters = [...(c.fpsLimit > 0 ? [`fps=${c.fpsLimit}`] : []), `scale=${size.width}:${size.height}:flags=bilinear`, "format=rgb24"];
  const record: string[] = [];
  let listFile = "";
  if (c.recordTo) {
    fs.mkdirSync(c.recordTo, { recursive: true });
    listFile = path.join(c.recordTo, `.${c.sourceId}-segments-${Date.now()}.csv`);
    record.push(
      "-map", "0:v:0", "-c:v", "copy", "-an", "-f", "segment", "-segment_time", String(c.recordInterval / 1000), "-reset_timestamps", "1",
      "-segment_format", "mp4", "-segment_list", listFile, "-segment_list_type", "csv", "-strftime", "1",
      path.join(c.recordTo, `${c.sourceId}-%Y%m%dT%H%M%S.mp4`),
    );
  }
  const args = [
    "-nostdin", "-hide_banner", "-loglevel", "error", ...hw,
    "-rtsp_transport", c.rtspUseTCP ? "tcp" : "udp", "-stimeout", String(c.rtspTimeoutMs * 1000),
    "-i", c.VIDEO_IN,
    "-map", "0:v:0", "-vf", filters.join(","), "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1",
    ...record,
  ];
  const child = spawn(ffmpegPath(), args, { stdio: ["ignore", "pipe", "pipe"] });
  const kill = () => child.kill("SIGKILL");
  o.signal.addEventListener("abort", kill, { once: true });
  let err = "";
  child.stderr.on("data", (b: Buffer) => (err = (err + b.toString()).slice(-2000)));
  const frameBytes = size.width * size.height * 3;
  const queue: Uint8Array[] = [];
  const cutter = new FrameCutter(frameBytes);
  let ended = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  // rtspTimeoutMs also bounds silence on the stream (RTP over UDP has no socket to time out): no
  // frame data for that long ends this connection, and the caller reconnects
  let lastData = Date.now();
  let gotData = false;
  let silent = false;
  const watchdog = setInterval(() => {
    // opening the stream (RTSP handshake, the first keyframe) gets longer than a gap between frames
    const limit = gotData ? c.rtspTimeoutMs : 2 * c.rtspTimeoutMs + 3000;
    if (Date.now() - lastData > limit && !child.stdout.isPaused()) {
      silent = true;
      child.kill("SIGKILL");
    }
  }, Math.min(1000, c.rtspTimeoutMs / 2));
  child.stdout.on("data", (chunk: Buffer) => {
    lastData = Date.now();
    gotData = true;
    cutter.push(chunk, (f) => {
      queue.push(f);
      o.stats.framesRead++;
      if (c.maxQueueSize > 0 && queue.length > c.maxQueueSize) {
        queue.shift();
        o.stats.framesDropped++;
      }
    });
    // no queue: the reader waits for the pipeline (ffmpeg's own buffers then fill and it blocks)
    if (c.maxQueueSize === 0 && queue.length >= 1) child.stdout.pause();
    o.stats.queueLength = queue.length;
    notify();
  });
  const closed = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  child.stdout.once("end", () => {
    ended = true;
    notify();
  });
  // recording: segments listed by ffmpeg as each one completes
  let listed = 0;
  const readList = () => {
    if (!listFile || !o.onSegment || !fs.existsSync(listFile)) return;
    const lines = fs.readFileSync(listFile, "utf8").split("\n").filter(Boolean);
    for (; listed < lines.length; listed++) {
      const [name, start, end] = lines[listed]!.split(",");
      const file = path.join(c.recordTo, name!);
      const st = fs.existsSync(file) ? fs.statSync(file) : null;
      if (!st) continue;
      const durationMs = Math.round((Number(end) - Number(start)) * 1000);
      o.onSegment({ file, startMs: st.mtimeMs - durationMs, durationMs });
    }
  };
  const listTimer = listFile ? setInterval(readList, 500) : null;
  try {
    for (;;) {
      if (!queue.length && !ended) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      const f = queue.shift();
      o.stats.queueLength = queue.length;
      if (!f) break;
      if (child.stdout.isPaused()) {
        lastData = Date.now();
        child.stdout.resume();
      }
      yield { data: f, width: size.width, height: size.height };
    }
    const code = await closed;
    if (silent) throw new Error(`no video for ${c.rtspTimeoutMs} ms (rtspTimeoutMs)`);
    if (code !== 0 && !o.signal.aborted) throw new Error(safeUrl(err.trim().split("\n").slice(-2).join(" ")) || `ffmpeg exit ${code}`);
  } finally {
    clearInterval(watchdog);
    o.signal.removeEventListener("abort", kill);
    if (child.exitCode === null) {
      // let ffmpeg close the recording segment properly, then make sure it is gone
      child.kill("SIGINT");
      await Promise.race([closed, new Promise((r) => setTimeout(r, 3000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    if (listTimer) clearInterval(listTimer);
    readList();
    if (listFile) fs.rmSync(listFile, { force: true });
  }
}
