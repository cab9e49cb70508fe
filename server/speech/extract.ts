/**
 * The first audio stream of any media as 16 kHz mono float32 samples in [-1, 1], decoded by ffmpeg
 * onto a pipe and handed out chunk by chunk. The consumer pulls (async iteration), so while it
 * transcribes a segment ffmpeg is held back by the pipe and memory stays bounded by what the
 * consumer keeps, never by the length of the file.
 */
import { spawn } from "node:child_process";
import { ObscuraError } from "@/lib/errors";
import { ffmpegPath } from "../media/binaries";
import { ffmpegFailure, runFfprobe } from "../media/ffmpeg";

export const SPEECH_SAMPLE_RATE = 16000;

export interface AudioStreamInfo {
  /** Whether the media has an audio stream at all. */
  hasAudio: boolean;
  /** Duration of the audio stream, else of the container; null when neither is known. */
  durationSeconds: number | null;
}

/** Whether `file` has an audio stream, and how long it is (one ffprobe run, no decoding). */
export async function probeAudio(file: string, opts: { signal?: AbortSignal } = {}): Promise<AudioStreamInfo> {
  const args = ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=index,duration:format=duration", "-of", "json", file];
  const res = await runFfprobe(args, opts);
  if (opts.signal?.aborted) throw cancelled();
  if (res.code !== 0) throw ffmpegFailure("ffprobe", ["-i", file], res);
  let parsed: { streams?: Array<{ duration?: string }>; format?: { duration?: string } };
  try {
    parsed = JSON.parse(res.stdout) as typeof parsed;
  } catch {
    throw new ObscuraError("INVALID_ARGUMENT", "ffprobe could not read the input: unparseable output");
  }
  const stream = parsed.streams?.[0];
  const seconds = (s: string | undefined) => (s !== undefined && Number.isFinite(Number(s)) && Number(s) > 0 ? Number(s) : null);
  return { hasAudio: !!stream, durationSeconds: seconds(stream?.duration) ?? seconds(parsed.format?.duration) };
}

/**
 * Decodes the first audio stream to 16 kHz mono (channels averaged) and yields Float32Array chunks
 * of any length. Rejects with CANCELLED on abort (ffmpeg is killed), INVALID_ARGUMENT when the input
 * cannot be read or has no audio stream (check with `probeAudio` first).
 */
export async function* extractAudio(file: string, opts: { signal?: AbortSignal } = {}): AsyncGenerator<Float32Array> {
  const args = [
    "-nostdin", "-hide_banner", "-nostats", "-loglevel", "error",
    "-i", file,
    "-map", "0:a:0", "-vn", "-sn", "-dn",
    "-ac", "1", "-ar", String(SPEECH_SAMPLE_RATE), "-f", "f32le", "-acodec", "pcm_f32le", "pipe:1",
  ];
  if (opts.signal?.aborted) throw cancelled();
  const child = spawn(ffmpegPath(), args, { stdio: ["ignore", "pipe", "pipe"] });
  const onAbort = () => child.kill("SIGKILL");
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const stderrLines: string[] = [];
  child.stderr.on("data", (b: Buffer) => {
    stderrLines.push(...b.toString("utf8").split(/\r?\n/).filter(Boolean));
    if (stderrLines.length > 40) stderrLines.splice(0, stderrLines.length - 40);
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once("error", (cause) => reject(new ObscuraError("INTERNAL", `could not start ffmpeg: ${cause.message}`, { cause })));
    child.once("close", (code) => resolve(code));
  });
  exited.catch(() => undefined); // observed below; this only keeps an early exit of the consumer quiet
  // A chunk boundary may fall inside a float: the 0-3 leftover bytes wait for the next chunk.
  let rest = Buffer.alloc(0);
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      const bytes = rest.length ? Buffer.concat([rest, chunk]) : chunk;
      const usable = bytes.length - (bytes.length % 4);
      rest = Buffer.from(bytes.subarray(usable));
      if (usable === 0) continue;
      // Copy into a fresh, aligned buffer (Buffer slices may sit at odd offsets of a shared pool).
      const samples = new Float32Array(usable / 4);
      new Uint8Array(samples.buffer).set(bytes.subarray(0, usable));
      yield samples;
    }
    const code = await exited;
    if (opts.signal?.aborted) throw cancelled();
    if (code !== 0) throw ffmpegFailure("ffmpeg", args, { code, stdout: "", stderrLines });
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

function cancelled(): ObscuraError {
  return new ObscuraError("CANCELLED", "speech transcription was cancelled");
}
