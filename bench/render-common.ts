/**
 * Shared by bench/render.ts and bench/render-memory.ts: the 1080p test clips, the moving tracks,
 * CPU time from /proc, a sampler of a process tree's memory and CPU (Linux /proc), and the
 * progress-smoothness summary.
 */
import fs from "node:fs";
import path from "node:path";
import { runFfmpeg } from "../server/media";
import type { VideoRenderConfig } from "../server/render";
import type { Track } from "../server/tracking";

/** RenderConfig as the API defaults it (MOSAIC, RECTANGLE, MEDIUM; quality 0.65 -> CRF 23; ULTRAFAST). */
export const BASE_CONFIG: VideoRenderConfig = {
  redactionStyle: "MOSAIC", redactionShape: "RECTANGLE", redactionIntensity: "MEDIUM", redactionColor: "#9F0500",
  maskAudio: null, maskAudioParams: [0.32, -0.24], videoQuality: 0.65, videoPreset: "ULTRAFAST", exportHashes: [],
};
export const BLUR_ELLIPSE: VideoRenderConfig = { ...BASE_CONFIG, redactionStyle: "BLUR", redactionShape: "ELLIPSE" };

/**
 * A 1920x1080 clip from ffmpeg's testsrc2 (moving pattern) with temporal noise of strength
 * `noise` (0: none) and a 440 Hz AAC tone, encoded with libx264 ultrafast.
 */
export async function makeTestClip(file: string, opts: { seconds: number; fps: number; noise: number; width?: number; height?: number; audio?: boolean }): Promise<void> {
  const { seconds, fps, noise, audio = true } = opts;
  const size = `${opts.width ?? 1920}x${opts.height ?? 1080}`;
  await runFfmpeg([
    "-f", "lavfi", "-i", `testsrc2=size=${size}:rate=${fps}${noise > 0 ? `,noise=alls=${noise}:allf=t` : ""}`,
    ...(audio ? ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"] : []),
    "-t", String(seconds), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
    ...(audio ? ["-c:a", "aac", "-b:a", "96k", "-shortest"] : ["-an"]),
    file,
  ]);
}

/**
 * `times` copies of a video-only `segment` back to back (concat demuxer, stream copy) with a
 * fresh 440 Hz AAC tone as long as the whole: made in seconds, not minutes, and on a constant
 * frame rate (concatenating segments with their own audio leaves gaps at the joins).
 */
export async function concatClip(segment: string, times: number, seconds: number, file: string): Promise<void> {
  const list = `${file}.txt`;
  fs.writeFileSync(list, Array.from({ length: times }, () => `file '${path.resolve(segment).replace(/'/g, "'\\''")}'`).join("\n") + "\n");
  await runFfmpeg([
    "-f", "concat", "-safe", "0", "-i", list, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
    "-map", "0:v:0", "-map", "1:a:0", "-c:v", "copy", "-c:a", "aac", "-b:a", "96k", "-t", String(seconds), "-movflags", "+faststart", file,
  ]);
  fs.rmSync(list, { force: true });
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/**
 * `count` tracks over the whole clip, sizes spread over 40..300 px (long side), each moving across
 * the frame at 3..12 px a frame in its own direction (bouncing off the edges) and breathing in
 * size by +-10 %, with a keyframe every `every` frames: the renderer interpolates the 9 frames
 * between them.
 */
export function movingTracks(width: number, height: number, frameCount: number, count = 10, every = 10, seed = 7): Track[] {
  const r = rng(seed);
  const tracks: Track[] = [];
  const last = Math.max(0, frameCount - 1);
  for (let i = 0; i < count; i++) {
    const long = 40 + (260 * i) / Math.max(1, count - 1);
    const aspect = 0.7 + 0.6 * r(); // width / height
    const w0 = aspect >= 1 ? long : long * aspect;
    const h0 = aspect >= 1 ? long / aspect : long;
    let x = r() * (width - w0);
    let y = r() * (height - h0);
    const speed = 3 + 9 * r();
    const angle = r() * 2 * Math.PI;
    let vx = speed * Math.cos(angle);
    let vy = speed * Math.sin(angle);
    const phase = r() * 2 * Math.PI;
    const keyframes: Track["keyframes"] = [];
    for (let f = 0; ; f = Math.min(last, f + every)) {
      const k = 1 + 0.1 * Math.sin(phase + f / 40);
      const w = w0 * k;
      const h = h0 * k;
      keyframes.push({ frame: f, box: { x: Math.min(Math.max(0, x), width - w), y: Math.min(Math.max(0, y), height - h), width: w, height: h }, score: 1, source: "detected" });
      if (f === last) break;
      const step = Math.min(every, last - f);
      x += vx * step;
      y += vy * step;
      if (x < 0 || x > width - w0) (vx = -vx), (x = Math.min(Math.max(0, x), width - w0));
      if (y < 0 || y > height - h0) (vy = -vy), (y = Math.min(Math.max(0, y), height - h0));
    }
    tracks.push({ id: i + 1, type: "face", firstFrame: 0, lastFrame: last, keyframes });
  }
  return tracks;
}

const TICK = 100; // USER_HZ (getconf CLK_TCK) on Linux

function statFields(pid: number | "self"): string[] | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return s.slice(s.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/**
 * CPU seconds (user + system) of this process and of its children that have been waited for
 * (the ffmpeg processes once they exited): /proc/self/stat utime, stime, cutime, cstime.
 */
export function cpuSeconds(): { self: number; children: number } {
  const f = statFields("self")!;
  return { self: (Number(f[11]) + Number(f[12])) / TICK, children: (Number(f[13]) + Number(f[14])) / TICK };
}

export type Role = "node" | "decoder" | "encoder" | "other";

interface ProcSample {
  pid: number;
  role: Role;
  rssKiB: number;
  hwmKiB: number;
  cpu: number;
}

function readProc(pid: number, root: number): ProcSample | null {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return null;
  }
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  let role: Role = "other";
  if (pid === root) role = "node";
  else {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      // A child between fork and exec is still a copy of Node (its pages shared with it): skipped.
      if (cmd[0] && fs.readlinkSync(`/proc/${pid}/exe`) === fs.readlinkSync(`/proc/${root}/exe`)) return null;
      // renderVideo's decoder writes rawvideo to pipe:1; its encoder reads pipe:0 (runFfmpeg's
      // -progress pipe:1 is not a decoder).
      if (path.basename(cmd[0] ?? "") === "ffmpeg") {
        role = cmd.includes("-progress") ? "other" : cmd.includes("pipe:1") ? "decoder" : cmd.includes("pipe:0") ? "encoder" : "other";
      }
    } catch {
      return null;
    }
  }
  const f = statFields(pid);
  const cpu = f ? (Number(f[11]) + Number(f[12])) / TICK : 0;
  return { pid, role, rssKiB: kib("VmRSS"), hwmKiB: kib("VmHWM"), cpu };
}

function descendants(root: number): number[] {
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    out.push(pid);
    let tasks: string[] = [];
    try {
      tasks = fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        for (const c of fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/)) if (c) queue.push(Number(c));
      } catch {
        /* gone */
      }
    }
  }
  return out;
}

export interface MemorySample {
  /** Seconds since the sampler started. */
  t: number;
  /** VmRSS in MiB: the whole tree, and per role (summed over processes of that role). */
  totalMiB: number;
  nodeMiB: number;
  decoderMiB: number;
  encoderMiB: number;
  otherMiB: number;
}

const mib = (kib: number) => +(kib / 1024).toFixed(1);

/**
 * Samples a process tree (root and every descendant, through /proc/<pid>/task/<tid>/children)
 * every `intervalMs`: VmRSS per process, summed per role (the root is "node"; ffmpeg writing to
 * pipe:1 the decoder, reading pipe:0 the encoder), each process's VmHWM (the kernel's own peak
 * RSS, which catches spikes between samples) and its CPU time (utime + stime, last value seen).
 * Summing VmRSS counts pages shared between processes (the ffmpeg binary's text) once per
 * process: an upper bound.
 */
export class TreeSampler {
  readonly samples: MemorySample[] = [];
  private readonly procs = new Map<number, { role: Role; hwmKiB: number; cpu: number }>();
  private readonly t0 = performance.now();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly root: number, private readonly intervalMs = 150) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  sample(): void {
    const sums: Record<Role, number> = { node: 0, decoder: 0, encoder: 0, other: 0 };
    for (const pid of descendants(this.root)) {
      const p = readProc(pid, this.root);
      if (!p) continue;
      const known = this.procs.get(pid);
      // A role once known sticks (an exiting process has no cmdline left).
      const role = known && known.role !== "other" ? known.role : p.role;
      sums[role] += p.rssKiB;
      this.procs.set(pid, { role, hwmKiB: Math.max(known?.hwmKiB ?? 0, p.hwmKiB), cpu: Math.max(known?.cpu ?? 0, p.cpu) });
    }
    const total = sums.node + sums.decoder + sums.encoder + sums.other;
    if (total === 0) return;
    this.samples.push({
      t: +((performance.now() - this.t0) / 1000).toFixed(2),
      totalMiB: mib(total), nodeMiB: mib(sums.node), decoderMiB: mib(sums.decoder), encoderMiB: mib(sums.encoder), otherMiB: mib(sums.other),
    });
  }

  /** Peak of the summed tree and of each role over the samples, and the per-process VmHWM peaks. */
  summary() {
    const peak = (k: keyof MemorySample) => Math.max(0, ...this.samples.map((s) => s[k]));
    const hwm: Record<Role, number> = { node: 0, decoder: 0, encoder: 0, other: 0 };
    const cpu: Record<Role, number> = { node: 0, decoder: 0, encoder: 0, other: 0 };
    for (const p of this.procs.values()) {
      hwm[p.role] = Math.max(hwm[p.role], p.hwmKiB);
      cpu[p.role] += p.cpu;
    }
    return {
      samples: this.samples.length,
      intervalMs: this.intervalMs,
      peakTreeRssMiB: peak("totalMiB"),
      peakRssMiB: { node: peak("nodeMiB"), decoder: peak("decoderMiB"), encoder: peak("encoderMiB"), other: peak("otherMiB") },
      /** Largest VmHWM of one process of each role (the kernel's peak, between samples too). */
      peakHwmMiB: { node: mib(hwm.node), decoder: mib(hwm.decoder), encoder: mib(hwm.encoder), other: mib(hwm.other) },
      /** CPU seconds per role, as last sampled (the last interval before each exit is missed). */
      cpuSecondsSampled: { node: +cpu.node.toFixed(2), decoder: +cpu.decoder.toFixed(2), encoder: +cpu.encoder.toFixed(2), other: +cpu.other.toFixed(2) },
    };
  }
}

/** Records onProgress calls as (seconds since start, fraction). */
export class ProgressLog {
  readonly points: Array<[number, number]> = [];
  private readonly t0 = performance.now();
  readonly onProgress = (fraction: number) => {
    this.points.push([(performance.now() - this.t0) / 1000, fraction]);
  };

  /**
   * Largest jump in fraction and largest time gap between consecutive callbacks; also the wait
   * from the start of the render to the first callback and from the last fraction < 1 to the
   * final 1 (both included in maxGapSeconds, which counts from t = 0 and to the end), and the
   * longest stall: time between a fraction and the next larger one (repeats do not count).
   */
  summary(endSeconds = (performance.now() - this.t0) / 1000) {
    const p = this.points;
    let maxJump = p.length ? p[0]![1] : 1;
    let maxJumpAt = 0;
    let maxGap = p.length ? p[0]![0] : endSeconds;
    let maxGapAt = 0;
    for (let i = 1; i < p.length; i++) {
      const jump = p[i]![1] - p[i - 1]![1];
      const gap = p[i]![0] - p[i - 1]![0];
      if (jump > maxJump) (maxJump = jump), (maxJumpAt = p[i - 1]![1]);
      if (gap > maxGap) (maxGap = gap), (maxGapAt = p[i - 1]![1]);
    }
    const tail = p.length ? endSeconds - p[p.length - 1]![0] : 0;
    if (tail > maxGap) (maxGap = tail), (maxGapAt = 1);
    const finalIndex = p.findIndex((x) => x[1] >= 1);
    const beforeFinal = finalIndex > 0 ? p[finalIndex]![0] - p[finalIndex - 1]![0] : null;
    let decreasing = 0;
    let repeats = 0;
    // Longest time the fraction did not move up (repeated values count as no progress).
    let stall = p.length ? p[0]![0] : endSeconds;
    let stallFrom = 0;
    let since = 0;
    for (let i = 1; i < p.length; i++) {
      if (p[i]![1] < p[i - 1]![1]) decreasing++;
      if (p[i]![1] === p[i - 1]![1]) repeats++;
      if (p[i]![1] > p[since]![1]) {
        const s = p[i]![0] - p[since]![0];
        if (s > stall) (stall = s), (stallFrom = p[since]![1]);
        since = i;
      }
    }
    return {
      callbacks: p.length,
      maxJump: +maxJump.toFixed(4),
      maxJumpFrom: +maxJumpAt.toFixed(4),
      maxGapSeconds: +maxGap.toFixed(3),
      maxGapFrom: +maxGapAt.toFixed(4),
      firstCallbackSeconds: p.length ? +p[0]![0].toFixed(3) : null,
      finalGapSeconds: beforeFinal === null ? null : +beforeFinal.toFixed(3),
      maxStallSeconds: +stall.toFixed(3),
      maxStallAt: +stallFrom.toFixed(4),
      repeatedCallbacks: repeats,
      decreasing,
      endsAtOne: p.length > 0 && p[p.length - 1]![1] === 1,
    };
  }

  /** About `n` evenly spaced points of the trace (for the JSON; the full trace is per frame). */
  thinned(n = 60): Array<[number, number]> {
    const step = Math.max(1, Math.floor(this.points.length / n));
    const out = this.points.filter((_, i) => i % step === 0 || i === this.points.length - 1);
    return out.map(([t, f]) => [+t.toFixed(2), +f.toFixed(4)]);
  }
}
