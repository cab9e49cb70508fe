/**
 * Render memory: peak resident memory of a whole redacted render (Node + the ffmpeg decoder and
 * encoder) on a 1-minute and a longer 1080p clip; the render must not grow with the length.
 * Writes bench/results/render-memory.json and a plot of memory over time.
 *   node --import tsx bench/render-memory.ts [--minutes 3] [--fps 25] [--interval 150] [--svg FILE]
 *   node --import tsx bench/render-memory.ts --minutes 10      # the figure (~10 min on 2 cores)
 *
 * - Clips: a 60 s 1920x1080 testsrc2 segment (light temporal noise, --fps, no audio),
 *   libx264 ultrafast, concatenated 1 and --minutes times (stream copy: made in seconds) with a
 *   fresh 440 Hz AAC tone over the whole. 10 tracks move across the frame (40-300 px, keyframes
 *   every 10 frames), MOSAIC rectangle MEDIUM, RENDER_DEFAULTS encoder settings (CRF 23, ultrafast).
 * - Each render runs in its own Node process (this script with --child), so its heap starts fresh.
 *   This process samples that process tree every --interval ms from /proc: VmRSS of the Node
 *   process, of the ffmpeg decoder and of the encoder (and their sum: the tree), plus each
 *   process's VmHWM (the kernel's own peak, between samples too). The child reports its own
 *   process.memoryUsage() peaks (rss, heapUsed, heapTotal, external, arrayBuffers) and every
 *   onProgress call (largest jump, longest gap).
 * - Targets: tree peak under 1 GiB, and the long clip's peak at most 10 % above the short one's.
 * - Default --minutes 3 keeps `npm run bench` to a few minutes; the plot goes to
 *   bench/results/render-memory.svg, or to docs/img/render-memory.svg for runs of 10 minutes and
 *   more (or wherever --svg says).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { probe } from "../server/media";
import { renderVideo } from "../server/render";
import { tempDir } from "../test/helpers/server";
import { lineChart } from "./svg";
import { BASE_CONFIG, concatClip, makeTestClip, movingTracks, ProgressLog, TreeSampler, type MemorySample } from "./render-common";

const arg = (name: string) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);
const MiB = 1024 * 1024;

if (process.argv.includes("--child")) {
  // One render, measured from outside; reports on stdout (one JSON line at the end).
  const [clip, output] = [arg("child")!, arg("output")!];
  const info = await probe(clip);
  const tracks = movingTracks(info.video.displayWidth, info.video.displayHeight, info.video.frameCount);
  const peak = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
  const sampleHeap = () => {
    const m = process.memoryUsage();
    for (const k of Object.keys(peak) as Array<keyof typeof peak>) peak[k] = Math.max(peak[k], m[k]);
  };
  const timer = setInterval(sampleHeap, 200);
  const progress = new ProgressLog();
  const t0 = performance.now();
  const r = await renderVideo(clip, output, { info, tracks, config: BASE_CONFIG, onProgress: progress.onProgress });
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  sampleHeap();
  const mib = (b: number) => +(b / MiB).toFixed(1);
  process.stdout.write(JSON.stringify({
    frames: r.frames,
    renderSeconds: +seconds.toFixed(2),
    redactMsPerFrame: +((r.redactSeconds / r.frames) * 1000).toFixed(2),
    nodeMemoryPeakMiB: { rss: mib(peak.rss), heapUsed: mib(peak.heapUsed), heapTotal: mib(peak.heapTotal), external: mib(peak.external), arrayBuffers: mib(peak.arrayBuffers) },
    progress: progress.summary(seconds),
    progressTrace: progress.thinned(60),
  }) + "\n");
  process.exit(0);
}

const minutes = Number(arg("minutes")) || 3;
const fps = Number(arg("fps")) || 25;
const interval = Number(arg("interval")) || 150;
const svgFile = path.resolve(arg("svg") ?? (minutes >= 10 ? "docs/img/render-memory.svg" : "bench/results/render-memory.svg"));
const PEAK_TARGET_MIB = 1024;
const GROWTH_TARGET = 1.1;
const log = (s: string) => process.stderr.write(`[render-memory] ${s}\n`);
const dir = tempDir("bench-render-memory");

const segment = path.join(dir, "segment-1min.mp4");
log(`making a 60 s 1920x1080 ${fps} fps clip`);
await makeTestClip(segment, { seconds: 60, fps, noise: 2, audio: false });
const short = path.join(dir, "clip-1min.mp4");
const long = path.join(dir, `clip-${minutes}min.mp4`);
log(`making the 1 min and ${minutes} min clips from it`);
await concatClip(segment, 1, 60, short);
await concatClip(segment, minutes, minutes * 60, long);
fs.rmSync(segment);

async function measure(name: string, clip: string) {
  const info = await probe(clip);
  log(`${name}: rendering ${info.video.frameCount} frames (${info.durationSeconds} s)`);
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve("bench/render-memory.ts"), "--child", clip, "--output", path.join(dir, `${name}-out.mp4`)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const sampler = new TreeSampler(child.pid!, interval).start();
  let stdout = "";
  child.stdout!.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  sampler.stop();
  if (code !== 0) throw new Error(`the ${name} render exited with ${code}`);
  const report = JSON.parse(stdout.trim().split("\n").pop()!);
  const s = sampler.summary();
  const row = {
    clip: { minutes: +(info.durationSeconds! / 60).toFixed(2), width: info.video.width, height: info.video.height, fps: info.video.fps, frames: info.video.frameCount, bytes: fs.statSync(clip).size },
    outputBytes: fs.statSync(path.join(dir, `${name}-out.mp4`)).size,
    renderSeconds: report.renderSeconds,
    renderFps: +(report.frames / report.renderSeconds).toFixed(1),
    redactMsPerFrame: report.redactMsPerFrame,
    /** Largest sum of VmRSS over the tree at one sample. */
    peakTreeRssMiB: s.peakTreeRssMiB,
    /** Largest VmRSS of each part at one sample (they need not peak together). */
    peakRssMiB: s.peakRssMiB,
    /** Sum of the per-process kernel peaks (VmHWM): an upper bound for the tree, spikes between samples included. */
    sumOfPeakHwmMiB: +(s.peakHwmMiB.node + s.peakHwmMiB.decoder + s.peakHwmMiB.encoder + s.peakHwmMiB.other).toFixed(1),
    peakHwmMiB: s.peakHwmMiB,
    /** The Node process from inside (process.memoryUsage, every 200 ms). */
    nodeMemoryPeakMiB: report.nodeMemoryPeakMiB,
    /** RSS at the middle and at 90 % of the render against 10 %: a leak would show as growth. */
    treeRssMiBAt: {
      "10%": at(sampler.samples, 0.1),
      "50%": at(sampler.samples, 0.5),
      "90%": at(sampler.samples, 0.9),
    },
    samples: s.samples,
    cpuSecondsSampled: s.cpuSecondsSampled,
    progress: report.progress,
    progressTrace: report.progressTrace,
  };
  log(`${name}: ${JSON.stringify({ ...row, progressTrace: undefined })}`);
  return { row, samples: sampler.samples };
}

/** Tree RSS averaged over the samples around a fraction of the run. */
function at(samples: MemorySample[], f: number): number {
  const i = Math.round(f * (samples.length - 1));
  const w = samples.slice(Math.max(0, i - 3), i + 4);
  return +(w.reduce((a, s) => a + s.totalMiB, 0) / Math.max(1, w.length)).toFixed(1);
}

function thin(samples: MemorySample[], n = 300): MemorySample[] {
  const step = Math.max(1, Math.ceil(samples.length / n));
  return samples.filter((_, i) => i % step === 0 || i === samples.length - 1);
}

const shortRun = await measure("short", short);
const longRun = await measure("long", long);
const growth = longRun.row.peakTreeRssMiB / shortRun.row.peakTreeRssMiB;
const out = {
  benchmark: "render-memory",
  date: new Date().toISOString(),
  cpus: os.cpus().length,
  loadAverage: os.loadavg().map((v) => +v.toFixed(2)),
  method:
    `each render in its own Node process; VmRSS of that process and its ffmpeg children from /proc/<pid>/status every ${interval} ms, summed ` +
    "(pages shared between processes counted once per process), plus each process's VmHWM; Node's own process.memoryUsage() from inside",
  style: "MOSAIC RECTANGLE MEDIUM, 10 moving tracks (40-300 px), CRF 23, ultrafast",
  targets: { peakTreeRssMiB: PEAK_TARGET_MIB, longOverShortMax: GROWTH_TARGET, progressMaxJump: 0.02, progressMaxGapSeconds: 1 },
  longMinutes: minutes,
  short: shortRun.row,
  long: longRun.row,
  longOverShort: +growth.toFixed(3),
  meetsTargets: {
    peakUnder1GiB: Math.max(shortRun.row.peakTreeRssMiB, longRun.row.peakTreeRssMiB, shortRun.row.sumOfPeakHwmMiB, longRun.row.sumOfPeakHwmMiB) < PEAK_TARGET_MIB,
    longWithin10Percent: growth <= GROWTH_TARGET,
    progressSmooth: [shortRun.row, longRun.row].every((r) => r.progress.maxJump <= 0.02 && r.progress.maxGapSeconds <= 1),
  },
  plot: path.relative(process.cwd(), svgFile),
  memoryOverTime: { short: thin(shortRun.samples), long: thin(longRun.samples) },
};
fs.mkdirSync(path.resolve("bench/results"), { recursive: true });
fs.writeFileSync(path.resolve("bench/results/render-memory.json"), JSON.stringify(out, null, 2) + "\n");
const series = (s: MemorySample[], k: "totalMiB" | "nodeMiB" | "encoderMiB" | "decoderMiB") => thin(s, 600).map((x) => [x.t, x[k]] as [number, number]);
fs.mkdirSync(path.dirname(svgFile), { recursive: true });
fs.writeFileSync(
  svgFile,
  lineChart({
    title: `Render memory, 1080p, 1 min vs ${minutes} min clip (Node + ffmpeg decoder + encoder)`,
    xLabel: "seconds since the render process started",
    yLabel: "resident memory (MiB)",
    yMax: 1280,
    legendTop: 70,
    lines: [{ y: PEAK_TARGET_MIB, label: "1 GiB target" }],
    series: [
      { label: `${minutes} min: whole render (peak ${longRun.row.peakTreeRssMiB} MiB)`, color: "#9f0500", points: series(longRun.samples, "totalMiB") },
      { label: `1 min: whole render (peak ${shortRun.row.peakTreeRssMiB} MiB)`, color: "#2b7bb9", points: series(shortRun.samples, "totalMiB") },
      { label: `${minutes} min: ffmpeg encoder`, color: "#d98b00", dash: true, points: series(longRun.samples, "encoderMiB") },
      { label: `${minutes} min: Node`, color: "#4d9a3a", dash: true, points: series(longRun.samples, "nodeMiB") },
      { label: `${minutes} min: ffmpeg decoder`, color: "#7a5195", dash: true, points: series(longRun.samples, "decoderMiB") },
    ],
  }),
);
console.log(JSON.stringify({ ...out, memoryOverTime: undefined, short: { ...out.short, progressTrace: undefined }, long: { ...out.long, progressTrace: undefined } }));
fs.rmSync(dir, { recursive: true, force: true });
