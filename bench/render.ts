/**
 * Render speed: the face-api sample photo as a clip (10 s, 25 fps, 640x360 and 1280x720, 440 Hz
 * tone), rendered with its three faces as still tracks (MOSAIC rectangle and BLUR ellipse, MEDIUM),
 * against a plain transcode of the same clip (same CRF and preset), alternately, two rounds, in
 * one run so the ratio holds on a shared machine. Writes bench/results/render.json.
 *   node --import tsx bench/render.ts [--seconds 10]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { probe, runFfmpeg, transcodeVideo } from "../server/media";
import { renderVideo, type VideoRenderConfig } from "../server/render";
import type { Track } from "../server/tracking";
import { tempDir } from "../test/helpers/server";

const arg = (name: string) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);
const seconds = Number(arg("seconds")) || 10;
const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
/** The three faces as FACE_DETECTION boxes them (x1.5), on the sample scaled to 960 px wide. */
const FACES_960 = [
  { x: 186, y: 151, width: 134, height: 177 },
  { x: 388, y: 183, width: 156, height: 177 },
  { x: 693, y: 78, width: 187, height: 177 },
];
const dir = tempDir("bench-render");
const base: VideoRenderConfig = {
  redactionStyle: "MOSAIC", redactionShape: "RECTANGLE", redactionIntensity: "MEDIUM", redactionColor: "#9F0500",
  maskAudio: null, maskAudioParams: [0.32, -0.24], videoQuality: 0.65, videoPreset: "ULTRAFAST", exportHashes: [],
};
const results: Record<string, unknown>[] = [];
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
  for (let round = 0; round < 2; round++) {
    let t = performance.now();
    await transcodeVideo(clip, path.join(dir, "plain.mp4"), { info, quality: base.videoQuality, preset: base.videoPreset });
    times.plain!.push((performance.now() - t) / 1000);
    for (const [name, config] of [["mosaic", base], ["blurEllipse", { ...base, redactionStyle: "BLUR", redactionShape: "ELLIPSE" }]] as const) {
      t = performance.now();
      const r = await renderVideo(clip, path.join(dir, `${name}.mp4`), { info, tracks, config: config as VideoRenderConfig });
      times[name]!.push((performance.now() - t) / 1000);
      redactMs[name]!.push((r.redactSeconds / r.frames) * 1000);
    }
    process.stderr.write(`[render] ${w}x${h} round ${round + 1}: ${JSON.stringify(times)}\n`);
  }
  const best = (a: number[]) => Math.min(...a);
  const row = {
    clip: `${w}x${h}, ${info.video.frameCount} frames, 3 faces`,
    plainSeconds: +best(times.plain!).toFixed(2),
    mosaicSeconds: +best(times.mosaic!).toFixed(2),
    blurEllipseSeconds: +best(times.blurEllipse!).toFixed(2),
    mosaicRatio: +(best(times.mosaic!) / best(times.plain!)).toFixed(2),
    blurEllipseRatio: +(best(times.blurEllipse!) / best(times.plain!)).toFixed(2),
    redactMsPerFrame: { mosaic: +Math.min(...redactMs.mosaic!).toFixed(2), blurEllipse: +Math.min(...redactMs.blurEllipse!).toFixed(2) },
    renderFps: +(info.video.frameCount / best(times.mosaic!)).toFixed(1),
  };
  results.push(row);
  console.log(JSON.stringify(row));
}
const out = { benchmark: "render", date: new Date().toISOString(), cpus: os.cpus().length, loadAverage: os.loadavg().map((v) => +v.toFixed(2)), seconds, results };
fs.mkdirSync(path.resolve("bench/results"), { recursive: true });
fs.writeFileSync(path.resolve("bench/results/render.json"), JSON.stringify(out, null, 2) + "\n");
fs.rmSync(dir, { recursive: true, force: true });
