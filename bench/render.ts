/**
 * Render speed and progress: a redacted render against a plain ffmpeg transcode of the same clip
 * with the same encoder settings (transcodeVideo; same CRF and preset), alternately, two rounds,
 * best of each, in one run so the ratios hold on a shared machine. Writes bench/results/render.json.
 *   node --import tsx bench/render.ts [--seconds 10] [--hd-seconds 30] [--hd-fps 30] [--rounds 2] [--skip-small] [--skip-hd]
 *
 * - small: the face-api sample photo as a clip (--seconds, 25 fps, 640x360 and 1280x720, 440 Hz
 *   tone), its three faces as still tracks; MOSAIC rectangle and BLUR ellipse, MEDIUM.
 * - hd: a 1920x1080 testsrc2 clip with temporal noise (--hd-seconds, --hd-fps, AAC tone) and 10
 *   tracks moving across the frame (40-300 px, keyframes every 10 frames, so 9 of 10 boxes are
 *   interpolated): plain transcode, a render with no boxes (the pipeline's own cost: pipes, two
 *   processes), MOSAIC rectangle MEDIUM (the default style) and BLUR ellipse MEDIUM. Besides wall
 *   time: CPU seconds of the whole run (this process + the ffmpeg children, /proc/self/stat), the
 *   CPU split between Node, decoder and encoder (sampled from /proc every 200 ms), redaction ms per
 *   frame, and every onProgress call (time, fraction): largest jump and longest gap.
 * Defaults: render-only settings are RENDER_DEFAULTS (quality 0.65 -> CRF 23, preset ULTRAFAST).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { probe, runFfmpeg, transcodeVideo, type MediaInfo } from "../server/media";
import { videoQualityToCrf } from "../server/media/transcode";
import { renderVideo, type VideoRenderConfig } from "../server/render";
import type { Track } from "../server/tracking";
import { tempDir } from "../test/helpers/server";
import { BASE_CONFIG, BLUR_ELLIPSE, cpuSeconds, makeTestClip, movingTracks, ProgressLog, TreeSampler } from "./render-common";

const arg = (name: string) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);
const flag = (name: string) => process.argv.includes(`--${name}`);
const seconds = Number(arg("seconds")) || 10;
const hdSeconds = Number(arg("hd-seconds")) || 30;
const hdFps = Number(arg("hd-fps")) || 30;
const rounds = Number(arg("rounds")) || 2;
const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
/** The three faces as FACE_DETECTION boxes them (x1.5), on the sample scaled to 960 px wide. */
const FACES_960 = [
  { x: 186, y: 151, width: 134, height: 177 },
  { x: 388, y: 183, width: 156, height: 177 },
  { x: 693, y: 78, width: 187, height: 177 },
];
const RATIO_TARGET = 1.3;
const dir = tempDir("bench-render");
const log = (s: string) => process.stderr.write(`[render] ${s}\n`);
const best = (a: number[]) => Math.min(...a);
const r2 = (x: number) => +x.toFixed(2);

// ---- small clips: the sample photo, three still faces ----
const small: Record<string, unknown>[] = [];
if (!flag("skip-small")) {
  for (const [w, h] of [[640, 360], [1280, 720]] as const) {
    const clip = path.join(dir, `faces-${h}.mp4`);
    const top = Math.round(((w * 1280) / 1920 - h) / 2);
    await runFfmpeg([
      "-loop", "1", "-framerate", "25", "-i", SAMPLE, "-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
      "-t", String(seconds), "-vf", `scale=${w}:-2,crop=${w}:${h}:0:${top},noise=alls=12:allf=t`, // noise: a moving picture, not one repeated frame
      "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", clip,
    ]);
    const info = await probe(clip);
    const k = w / 960;
    const boxes = FACES_960.map((b) => ({ x: b.x * k, y: b.y * k - top, width: b.width * k, height: b.height * k }));
    const tracks: Track[] = boxes.map((box, i) => ({
      id: i + 1, type: "face", firstFrame: 0, lastFrame: info.video.frameCount - 1,
      keyframes: [{ frame: 0, box, score: 1, source: "detected" }, { frame: info.video.frameCount - 1, box, score: 1, source: "detected" }],
    }));
    const times: Record<string, number[]> = { plain: [], mosaic: [], blurEllipse: [] };
    const redactMs: Record<string, number[]> = { mosaic: [], blurEllipse: [] };
    for (let round = 0; round < rounds; round++) {
      let t = performance.now();
      await transcodeVideo(clip, path.join(dir, "plain.mp4"), { info, quality: BASE_CONFIG.videoQuality, preset: BASE_CONFIG.videoPreset });
      times.plain!.push((performance.now() - t) / 1000);
      for (const [name, config] of [["mosaic", BASE_CONFIG], ["blurEllipse", BLUR_ELLIPSE]] as const) {
        t = performance.now();
        const r = await renderVideo(clip, path.join(dir, `${name}.mp4`), { info, tracks, config });
        times[name]!.push((performance.now() - t) / 1000);
        redactMs[name]!.push((r.redactSeconds / r.frames) * 1000);
      }
      log(`${w}x${h} round ${round + 1}: ${JSON.stringify(times)}`);
    }
    const row = {
      clip: `${w}x${h}, ${info.video.frameCount} frames, 3 faces`,
      plainSeconds: r2(best(times.plain!)),
      mosaicSeconds: r2(best(times.mosaic!)),
      blurEllipseSeconds: r2(best(times.blurEllipse!)),
      mosaicRatio: r2(best(times.mosaic!) / best(times.plain!)),
      blurEllipseRatio: r2(best(times.blurEllipse!) / best(times.plain!)),
      redactMsPerFrame: { mosaic: r2(best(redactMs.mosaic!)), blurEllipse: r2(best(redactMs.blurEllipse!)) },
      renderFps: +(info.video.frameCount / best(times.mosaic!)).toFixed(1),
    };
    small.push(row);
    console.log(JSON.stringify(row));
  }
}

// ---- 1080p, 10 moving tracks ----
interface Run {
  wallSeconds: number;
  cpuSeconds: number;
  nodeCpuSeconds: number;
  childCpuSeconds: number;
  cpuByProcessSampled: Record<string, number>;
  peakTreeRssMiB: number;
  redactMsPerFrame?: number;
  frames?: number;
  progress?: ReturnType<ProgressLog["summary"]>;
  progressTrace?: Array<[number, number]>;
}

async function timed(fn: (onProgress: (f: number) => void) => Promise<{ frames: number; redactSeconds: number } | void>): Promise<Run> {
  const sampler = new TreeSampler(process.pid, 200).start();
  const progress = new ProgressLog();
  const c0 = cpuSeconds();
  const t0 = performance.now();
  const r = await fn(progress.onProgress);
  const wall = (performance.now() - t0) / 1000;
  const c1 = cpuSeconds();
  sampler.stop();
  const s = sampler.summary();
  const run: Run = {
    wallSeconds: r2(wall),
    cpuSeconds: r2(c1.self - c0.self + c1.children - c0.children),
    nodeCpuSeconds: r2(c1.self - c0.self),
    childCpuSeconds: r2(c1.children - c0.children),
    // other: the plain transcode's ffmpeg, or ffprobe (renderVideo probes the start offset)
    cpuByProcessSampled: { decoder: s.cpuSecondsSampled.decoder, encoder: s.cpuSecondsSampled.encoder, other: s.cpuSecondsSampled.other },
    peakTreeRssMiB: s.peakTreeRssMiB,
  };
  if (r) {
    run.frames = r.frames;
    run.redactMsPerFrame = r2((r.redactSeconds / r.frames) * 1000);
    run.progress = progress.summary(wall);
    run.progressTrace = progress.thinned(40);
  }
  return run;
}

let hd: Record<string, unknown> | null = null;
if (!flag("skip-hd")) {
  const clip = path.join(dir, "testsrc-1080.mp4");
  log(`making a ${hdSeconds} s 1920x1080 ${hdFps} fps clip`);
  await makeTestClip(clip, { seconds: hdSeconds, fps: hdFps, noise: 6 });
  const info: MediaInfo = await probe(clip);
  const tracks = movingTracks(info.video.displayWidth, info.video.displayHeight, info.video.frameCount);
  const renders: Array<[string, VideoRenderConfig, readonly Track[]]> = [
    ["noBoxes", BASE_CONFIG, []],
    ["mosaic", BASE_CONFIG, tracks],
    ["blurEllipse", BLUR_ELLIPSE, tracks],
  ];
  const runs: Record<string, Run[]> = { plain: [], noBoxes: [], mosaic: [], blurEllipse: [] };
  for (let round = 0; round < rounds; round++) {
    runs.plain!.push(await timed(() => transcodeVideo(clip, path.join(dir, "plain.mp4"), { info, quality: BASE_CONFIG.videoQuality, preset: BASE_CONFIG.videoPreset })));
    log(`1080p round ${round + 1} plain: ${JSON.stringify(runs.plain!.at(-1))}`);
    for (const [name, config, t] of renders) {
      runs[name]!.push(await timed((onProgress) => renderVideo(clip, path.join(dir, `${name}.mp4`), { info, tracks: t, config, onProgress })));
      const { progressTrace: _, ...show } = runs[name]!.at(-1)!;
      log(`1080p round ${round + 1} ${name}: ${JSON.stringify(show)}`);
    }
  }
  const fastest = (rs: Run[]) => rs.reduce((a, b) => (b.wallSeconds < a.wallSeconds ? b : a));
  const plain = fastest(runs.plain!);
  const plainCpu = best(runs.plain!.map((r) => r.cpuSeconds));
  const summary = (name: string) => {
    const rs = runs[name]!;
    const f = fastest(rs);
    const cpu = best(rs.map((r) => r.cpuSeconds));
    return {
      seconds: f.wallSeconds,
      ratio: r2(f.wallSeconds / plain.wallSeconds),
      meetsTarget: f.wallSeconds / plain.wallSeconds <= RATIO_TARGET,
      renderFps: +(info.video.frameCount / f.wallSeconds).toFixed(1),
      cpuSeconds: cpu,
      cpuRatio: r2(cpu / plainCpu),
      nodeCpuSeconds: best(rs.map((r) => r.nodeCpuSeconds)),
      redactMsPerFrame: best(rs.map((r) => r.redactMsPerFrame ?? 0)),
      cpuByProcessSampled: f.cpuByProcessSampled,
      peakTreeRssMiB: Math.max(...rs.map((r) => r.peakTreeRssMiB)),
      /** Worst over the rounds. */
      progress: {
        maxJump: Math.max(...rs.map((r) => r.progress!.maxJump)),
        maxGapSeconds: Math.max(...rs.map((r) => r.progress!.maxGapSeconds)),
        firstCallbackSeconds: Math.max(...rs.map((r) => r.progress!.firstCallbackSeconds ?? 0)),
        finalGapSeconds: Math.max(...rs.map((r) => r.progress!.finalGapSeconds ?? 0)),
        maxStallSeconds: Math.max(...rs.map((r) => r.progress!.maxStallSeconds)),
        callbacks: f.progress!.callbacks,
        smooth: rs.every((r) => r.progress!.maxJump <= 0.02 && r.progress!.maxGapSeconds <= 1),
      },
    };
  };
  hd = {
    clip: {
      source: "testsrc2 + temporal noise (alls=6), libx264 ultrafast, AAC 440 Hz tone",
      width: info.video.width, height: info.video.height, fps: info.video.fps, frames: info.video.frameCount, seconds: info.durationSeconds,
      bytes: fs.statSync(clip).size,
      tracks: tracks.length, boxLongSidePx: [40, 300], keyframeEvery: 10,
    },
    encoder: { crf: videoQualityToCrf(BASE_CONFIG.videoQuality), preset: BASE_CONFIG.videoPreset.toLowerCase() },
    ratioTarget: RATIO_TARGET,
    progressTarget: { maxJump: 0.02, maxGapSeconds: 1 },
    rounds,
    plain: { seconds: plain.wallSeconds, cpuSeconds: plainCpu, cpuByProcessSampled: plain.cpuByProcessSampled, peakTreeRssMiB: plain.peakTreeRssMiB },
    noBoxes: summary("noBoxes"),
    mosaic: summary("mosaic"),
    blurEllipse: summary("blurEllipse"),
    runs,
  };
  const { runs: _runs, ...show } = hd;
  console.log(JSON.stringify(show));
}

const out = {
  benchmark: "render",
  date: new Date().toISOString(),
  cpus: os.cpus().length,
  loadAverage: os.loadavg().map((v) => +v.toFixed(2)),
  note: "ratio = best render wall time / best plain transcode wall time, alternating rounds in one run; cpuRatio likewise with CPU seconds (Node + ffmpeg children)",
  seconds,
  results: small,
  hd1080: hd,
};
fs.mkdirSync(path.resolve("bench/results"), { recursive: true });
fs.writeFileSync(path.resolve("bench/results/render.json"), JSON.stringify(out, null, 2) + "\n");
fs.rmSync(dir, { recursive: true, force: true });
