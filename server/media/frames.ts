/**
 * Decoded video frames as packed RGB, streamed from ffmpeg's stdout (rawvideo rgb24), upright
 * (ffmpeg applies the rotation), optionally scaled so the longer side is at most `maxSide`, and
 * optionally only every `stride`-th frame (selected by ffmpeg, so skipped frames cost decoding
 * only). Frame indices are those of the source (0-based, in presentation order, vsync passthrough;
 * a variable-frame-rate source is first resampled to its average rate: probe.ts cfrFilter).
 * Up to `prefetch` frames are decoded ahead, so ffmpeg works while the caller runs detection.
 */
import { spawn } from "node:child_process";
import { ObscuraError } from "@/lib/errors";
import { ffmpegPath } from "./binaries";
import { cfrFilter, type MediaInfo } from "./probe";
import type { RgbImage } from "../vision/types";

export interface FrameOptions {
  /** Decode only frames whose index is a multiple of `stride` (default 1: every frame). */
  stride?: number;
  /** Scale down so that max(width, height) <= maxSide (never up). */
  maxSide?: number;
  signal?: AbortSignal;
  /** Frames decoded ahead of the consumer (default 2): decoding overlaps the caller's work. */
  prefetch?: number;
  /** First frame to decode (a seek; indexes stay the video's own frame numbers). Default 0. */
  start?: number;
  /** Decode at most this many frames. */
  count?: number;
}

export interface DecodedFrame {
  index: number;
  image: RgbImage;
  /** Scale from frame pixels to display pixels of the source (1 when not scaled). */
  scale: number;
}

/** Output size for a display size and a max side, even numbers (yuv/rgb friendliness). */
export function frameSize(info: MediaInfo, maxSide?: number): { width: number; height: number; scale: number } {
  const w = info.video.displayWidth;
  const h = info.video.displayHeight;
  const s = maxSide && Math.max(w, h) > maxSide ? maxSide / Math.max(w, h) : 1;
  const width = Math.max(2, Math.round((w * s) / 2) * 2);
  const height = Math.max(2, Math.round((h * s) / 2) * 2);
  return { width, height, scale: w / width };
}

/** Cuts raw video arriving in chunks into whole frames, each its own copy; a partial frame waits for the next chunk. */
export class FrameCutter {
  private partial: Uint8Array | null = null;
  private filled = 0;

  constructor(private readonly frameBytes: number) {}

  push(chunk: Buffer, onFrame: (frame: Uint8Array) => void): void {
    let off = 0;
    while (off < chunk.length) {
      if (!this.partial && chunk.length - off >= this.frameBytes) {
        // a whole frame in this chunk: one copy (the chunk's memory is not kept alive)
        onFrame(new Uint8Array(chunk.buffer, chunk.byteOffset + off, this.frameBytes).slice());
        off += this.frameBytes;
        continue;
      }
      this.partial ??= new Uint8Array(this.frameBytes);
      const n = Math.min(this.frameBytes - this.filled, chunk.length - off);
      this.partial.set(chunk.subarray(off, off + n), this.filled);
      this.filled += n;
      off += n;
      if (this.filled === this.frameBytes) {
        onFrame(this.partial);
        this.partial = null;
        this.filled = 0;
      }
    }
  }
}

export async function* decodeFrames(file: string, info: MediaInfo, opts: FrameOptions = {}): AsyncGenerator<DecodedFrame> {
  const stride = Math.max(1, Math.floor(opts.stride ?? 1));
  const { width, height, scale } = frameSize(info, opts.maxSide);
  const filters = [`scale=${width}:${height}:flags=bilinear`, "format=rgb24"];
  if (stride > 1) filters.unshift(`select='not(mod(n\\,${stride}))'`);
  const cfr = cfrFilter(info);
  if (cfr) filters.unshift(cfr);
  const start = Math.max(0, Math.floor(opts.start ?? 0));
  // seek half a frame early: the first frame at or after that time is frame `start`
  const seek = start > 0 && info.video.fps > 0 ? ["-ss", ((start - 0.5) / info.video.fps).toFixed(6)] : [];
  const count = opts.count != null ? ["-frames:v", String(Math.max(1, Math.floor(opts.count)))] : [];
  const args = ["-nostdin", "-hide_banner", "-loglevel", "error", ...seek, "-i", file, "-map", "0:v:0", "-vf", filters.join(","), "-vsync", "passthrough", ...count, "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"];
  if (opts.signal?.aborted) throw new ObscuraError("CANCELLED", "decoding was cancelled");
  const child = spawn(ffmpegPath(), args, { stdio: ["ignore", "pipe", "pipe"] });
  const onAbort = () => child.kill("SIGKILL");
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const stderr: string[] = [];
  child.stderr.on("data", (b: Buffer) => {
    stderr.push(b.toString("utf8"));
    if (stderr.length > 20) stderr.shift();
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const frameBytes = width * height * 3;
  // Frames are cut from stdout as it arrives and queued (up to `prefetch`), so ffmpeg decodes the
  // next frames while the caller works on this one; stdout is paused while the queue is full.
  const prefetch = Math.max(1, Math.floor(opts.prefetch ?? 2));
  const queue: Uint8Array[] = [];
  const cutter = new FrameCutter(frameBytes);
  let ended = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  child.stdout.on("data", (chunk: Buffer) => {
    cutter.push(chunk, (f) => queue.push(f));
    if (queue.length >= prefetch) child.stdout.pause();
    notify();
  });
  child.stdout.once("end", () => {
    ended = true;
    notify();
  });
  child.stdout.once("error", (e: Error) => {
    failure = e;
    notify();
  });
  let n = 0;
  try {
    for (;;) {
      if (!queue.length && !ended && !failure) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (failure) throw failure;
      const frame = queue.shift();
      if (!frame) break;
      if (queue.length < prefetch && child.stdout.isPaused()) child.stdout.resume();
      yield { index: start + n * stride, image: { data: frame, width, height }, scale };
      n++;
    }
    const code = await exited;
    if (opts.signal?.aborted) throw new ObscuraError("CANCELLED", "decoding was cancelled");
    if (code !== 0) throw new ObscuraError("INTERNAL", `ffmpeg could not decode the video: ${stderr.join("").trim().split("\n").slice(-3).join(" ")}`);
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}
