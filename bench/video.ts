/**
 * Video analysis speed: a generated 720p clip (the synthetic car scene panning, 25 fps) through
 * the real detection + tracking path (`detectVideo`), for several feature sets; reports frames of
 * video analysed per second (real time = the clip's fps). Writes bench/results/video.json.
 *   node --import tsx bench/video.ts [--seconds 8]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { probe, runFfmpeg } from "../server/media";
import { detectVideo } from "../server/vision/video";
import { DEFAULT_ENGINE_SETTINGS } from "../server/vision/engine";
import { carSvg } from "../test/helpers/scenes";
import { tempDir } from "../test/helpers/server";

const seconds = Number(process.argv[process.argv.indexOf("--seconds") + 1]) || 8;
const dir = tempDir("bench-video");
process.env.OBSCURA_DATA_DIR ??= path.join(dir, "data");
const scene = path.join(dir, "scene.png");
await sharp(Buffer.from(carSvg({ x: 300, y: 380, width: 200, height: 100 }))).resize(1600, 1200).png().toFile(scene);
const clip = path.join(dir, "clip720.mp4");
await runFfmpeg(["-loop", "1", "-framerate", "25", "-i", scene, "-t", String(seconds), "-vf", "crop=1280:720:'t*30':200,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast", clip]);
const media = await probe(clip);
const sets = [["LICENSE_PLATE_DETECTION"], ["FACE_DETECTION"], ["FACE_DETECTION", "LICENSE_PLATE_DETECTION"], ["PERSON_DETECTION", "VEHICLE_DETECTION"]];
const runs = [];
for (const features of sets) {
  // warm-up (model conversion and session creation are not part of the speed)
  await detectVideo(clip, { ...media, video: { ...media.video, frameCount: 3 } }, features, { ...DEFAULT_ENGINE_SETTINGS, profileName: "gen6_standard" });
  const t0 = performance.now();
  const r = await detectVideo(clip, media, features, { ...DEFAULT_ENGINE_SETTINGS, profileName: "gen6_standard" }, {
    onProgress: (f) => process.stderr.write(`\r[bench] ${features.join("+")}: ${(f * 100).toFixed(0)}%   `),
  });
  const s = (performance.now() - t0) / 1000;
  process.stderr.write("\n");
  runs.push({
    features,
    detectors: r.detectors,
    missingFeatures: r.missingFeatures,
    frames: media.video.frameCount,
    detectionStride: r.profile.detectionStride,
    framesDetected: r.framesDetected,
    tracks: r.tracks.length,
    seconds: +s.toFixed(2),
    videoFramesPerSecond: +(media.video.frameCount / s).toFixed(1),
    realTimeFactor: +(media.video.frameCount / s / media.video.fps).toFixed(2),
  });
}
const result = { benchmark: "video-analysis", date: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, clip: { width: 1280, height: 720, fps: media.video.fps, seconds }, runs };
fs.mkdirSync(path.join("bench", "results"), { recursive: true });
fs.writeFileSync(path.join("bench", "results", "video.json"), JSON.stringify(result, null, 2) + "\n");
console.log(JSON.stringify(result, null, 2));
