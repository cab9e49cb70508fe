/**
 * Generic ffmpeg / ffprobe runners: spawn, cancel through an AbortSignal (SIGKILL), progress from
 * `-progress pipe:1`, and failures turned into ObscuraErrors that quote the last meaningful lines
 * of stderr (with file paths reduced to their base names, so server paths don't reach users).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { ffmpegPath, ffprobePath } from "./binaries";

export interface RunFfmpegOptions {
  signal?: AbortSignal;
  /** Duration of the output being produced; progress is out_time / durationSeconds. */
  durationSeconds?: number;
  /** Called with a fraction 0..1 that never decreases; called with 1 on success. */
  onProgress?: (fraction: number) => void;
}

/** Lines of stderr kept in memory (the tail is all an error message needs). */
const STDERR_TAIL_LINES = 40;
/** Lines quoted in an error message. */
const QUOTED_LINES = 4;

/**
 * Runs ffmpeg with `-nostdin -hide_banner -nostats -loglevel warning -y -progress pipe:1` before
 * `args`. stdout is reserved for progress, so `args` must not write media to `pipe:1`.
 * Rejects with CANCELLED on abort, INVALID_ARGUMENT when an input could not be read, else INTERNAL.
 */
export async function runFfmpeg(args: string[], opts: RunFfmpegOptions = {}): Promise<void> {
  const full = ["-nostdin", "-hide_banner", "-nostats", "-loglevel", "warning", "-y", "-progress", "pipe:1", ...args];
  const progress = progressTracker(opts);
  const result = await runProcess(ffmpegPath(), full, { signal: opts.signal, onStdoutLine: progress.line });
  if (result.code !== 0) throw ffmpegFailure("ffmpeg", args, result);
  progress.finish();
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderrLines: string[];
}

/** Runs ffprobe (no extra arguments added); resolves even when it exits non-zero. */
export function runFfprobe(args: string[], opts: { signal?: AbortSignal } = {}): Promise<ProcessResult> {
  return runProcess(ffprobePath(), args, { signal: opts.signal, collectStdout: true });
}

interface RunProcessOptions {
  signal?: AbortSignal;
  collectStdout?: boolean;
  onStdoutLine?: (line: string) => void;
}

function runProcess(bin: string, args: string[], opts: RunProcessOptions): Promise<ProcessResult> {
  const tool = path.basename(bin);
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(cancelled(tool));
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    const stdoutChunks: Buffer[] = [];
    const stderrLines: string[] = [];
    let stdoutRest = "";
    let stderrRest = "";
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      child.kill("SIGKILL");
    };
    opts.signal?.addEventListener("abort", onAbort, { once: true });

    child.stdout.on("data", (chunk: Buffer) => {
      if (opts.collectStdout) stdoutChunks.push(chunk);
      if (!opts.onStdoutLine) return;
      const parts = (stdoutRest + chunk.toString("utf8")).split("\n");
      stdoutRest = parts.pop() ?? "";
      for (const line of parts) opts.onStdoutLine(line.trim());
    });
    child.stderr.on("data", (chunk: Buffer) => {
      const parts = (stderrRest + chunk.toString("utf8")).split(/\r?\n|\r/);
      stderrRest = parts.pop() ?? "";
      stderrLines.push(...parts);
      if (stderrLines.length > STDERR_TAIL_LINES) stderrLines.splice(0, stderrLines.length - STDERR_TAIL_LINES);
    });
    child.on("error", (cause) => {
      opts.signal?.removeEventListener("abort", onAbort);
      reject(new ObscuraError("INTERNAL", `could not start ${tool} (${bin}): ${cause.message}`, { cause }));
    });
    child.on("close", (code) => {
      opts.signal?.removeEventListener("abort", onAbort);
      if (aborted) return reject(cancelled(tool));
      if (stderrRest) stderrLines.push(stderrRest);
      if (stdoutRest && opts.onStdoutLine) opts.onStdoutLine(stdoutRest.trim());
      resolve({ code, stdout: Buffer.concat(stdoutChunks).toString("utf8"), stderrLines });
    });
  });
}

function cancelled(tool: string): ObscuraError {
  return new ObscuraError("CANCELLED", `${tool} was cancelled`);
}

function progressTracker(opts: RunFfmpegOptions) {
  let last = 0;
  const emit = (fraction: number) => {
    if (!opts.onProgress || !(fraction > last)) return;
    last = Math.min(1, fraction);
    opts.onProgress(last);
  };
  return {
    line(line: string) {
      const eq = line.indexOf("=");
      if (eq < 0 || !opts.durationSeconds || opts.durationSeconds <= 0) return;
      const key = line.slice(0, eq);
      // ffmpeg's out_time_ms is in microseconds too (a long-standing misnomer).
      if (key !== "out_time_us" && key !== "out_time_ms") return;
      const us = Number(line.slice(eq + 1));
      if (Number.isFinite(us) && us > 0) emit(Math.min(1, us / 1e6 / opts.durationSeconds));
    },
    finish() {
      emit(1);
    },
  };
}

/** Builds the error for a failed ffmpeg run from its stderr tail. */
export function ffmpegFailure(tool: string, args: string[], result: ProcessResult): ObscuraError {
  const inputs = args.flatMap((a, i) => (a === "-i" && args[i + 1] ? [args[i + 1]] : []));
  const lines = meaningfulLines(result.stderrLines);
  const inputUnreadable = lines.some(
    (l) =>
      inputs.some((input) => l.startsWith(`${input}: `)) ||
      /Invalid data found when processing input|moov atom not found|Error while decoding stream|could not find codec parameters/i.test(l),
  );
  const quoted = redactPaths(lines.slice(-QUOTED_LINES).join("; "), args) || "no error output";
  return inputUnreadable
    ? new ObscuraError("INVALID_ARGUMENT", `${tool} could not read the input: ${quoted}`)
    : new ObscuraError("INTERNAL", `${tool} failed (exit code ${result.code ?? "none"}): ${quoted}`);
}

export function meaningfulLines(lines: string[]): string[] {
  return lines
    .map((l) => l.trim().replace(/^\[([\w-]+) @ 0x[0-9a-f]+\]\s*/, "$1: "))
    .filter((l) => l && !/^(Input #|Output #|Stream mapping|Press \[q\]|frame=|size=|video:|Metadata:|Duration:|Stream #)/.test(l));
}

/** Replaces the file paths that appear in `args` with their base names. */
export function redactPaths(text: string, args: string[]): string {
  let out = text;
  for (const a of args) {
    if (a.length > 1 && path.isAbsolute(a) && a.includes(path.sep)) out = out.split(a).join(path.basename(a));
  }
  return out;
}
