/**
 * Video analysis speed: a generated 720p clip (the synthetic car scene panning, 25 fps) through
 * the real detection + tracking path (`detectVideo`), for several feature sets; reports frames of
 * video analysed per second (real time = the clip's fps). Writes bench/results/video.json.
 *   node --import tsx bench/video.ts [--seconds 8] [--schedule sweep|full|both] [--sets plates,faces,faces+plates,objects]
 * --schedule both (the default) runs each feature set with the old schedule ("full": every pass
 * on every detection frame) and the new one ("sweep", server/vision/schedule.ts) alternately in
 * one invocation, so their speeds compare on the same (shared) machine: `speedup` is full / sweep
 * time per feature set. Each run also reports its tracks' frame coverage of the plate.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { probe, runFfmpeg } from "../server/media";
import { detectVideo } from "../server/vision/video";
import { DEFAULT_ENGINE_SETTINGS } from "../server/vision/engine";
import { coverage } from "../lib/geometry";
import { expandTracks } from "../server/tracking";
import { carSvg } from "../test/helpers/scenes";
import { tempDir } from "../test/helpers/server";

const arg = (name: string) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);
const seconds = Number(arg("seconds")) || 8;
const scheduleArg = arg("schedule") ?? "both";
const schedules: Array<"full" | "sweep"> = scheduleArg === "both" ? ["full", "sweep"] : [scheduleArg as "full" | "sweep"];
const SETS: Record<string, string[]> = {
  plates: ["LICENSE_PLATE_DETECTION"],
  faces: ["FACE_DETECTION"],
  "faces+plates": ["FACE_DETECTION", "LICENSE_PLATE_DETECTION"],
  objects: ["PERSON_DETECTION", "VEHICLE_DETECTION"],
};
const dir = tempDir("bench-video");
process.env.OBSCURA_DATA_DIR ??= path.join(dir, "data");
const scene = path.join(dir, "scene.png");
await sharp(Buffer.from(carSvg({ x: 300, y: 380, width: 200, height: 100 }))).resize(1600, 1200).png().toFile(scene);
const clip = path.join(dir, "clip720.mp4");
await runFfmpeg(["-loop", "1", "-framerate", "25", "-i", scene, "-t", String(seconds), "-vf", "crop=1280:720:'t*30':200,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast", clip]);
const media = await probe(clip);
const sets = (arg("sets") ?? "plates,faces,faces+plates,objects").split(",").map((k) => SETS[k] ?? k.split("+"));
// Where the plate is in each frame (display pixels): the scene is 1600x1200 (plate at 600,760
// 400x200 after the 2x resize), cropped at x = 30 px/s * t, y = 200.
const plateAt = (frame: number) => ({ x: 600 - (30 * frame) / media.video.fps, y: 760 - 200, width: 400, height: 200 });
const runs = [];
// warm-up (model conversion and session creation are not part of the speed)
for (const features of sets) {
  for (const schedule of schedules) {
    await detectVideo(clip, { ...media, video: { ...media.video, frameCount: 3 } }, features, { ...DEFAULT_ENGINE_SETTINGS, profileName: "gen6_standard" }, { schedule });
  }
}
for (const features of sets) {
  const times: Record<string, number> = {};
  for (const schedule of schedules) {
    const t0 = performance.now();
    const r = await detectVideo(clip, media, features, { ...DEFAULT_ENGINE_SETTINGS, profileName: "gen6_standard" }, {
      schedule,
      onProgress: (f) => process.stderr.write(`\r[bench] ${features.join("+")} (${schedule}): ${(f * 100).toFixed(0)}%   `),
    });
    const s = (performance.now() - t0) / 1000;
    times[schedule] = s;
    process.stderr.write("\n");
    // Frames in which the plate is covered (>= 70%) by a plate track's box.
    const boxes = expandTracks(r.tracks.filter((t) => t.type === "licensePlate"), media.video.frameCount);
    const plateFramesCovered = boxes.filter((bs, f) => bs.some((b) => coverage(plateAt(f), b.box) >= 0.7)).length;
    runs.push({
      features,
      schedule,
      plateFramesCovered: features.includes("LICENSE_PLATE_DETECTION") ? plateFramesCovered : undefined,
      tracksByType: Object.fromEntries(["face", "licensePlate", "vehicle", "person"].map((t) => [t, r.tracks.filter((x) => x.type === t).length]).filter(([, n]) => n)),
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
  if (times.full && times.sweep) runs.push({ features, speedup: +(times.full / times.sweep).toFixed(2) });
}
const result = { benchmark: "video-analysis", date: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, clip: { width: 1280, height: 720, fps: media.video.fps, seconds }, runs };
fs.mkdirSync(path.join("bench", "results"), { recursive: true });
fs.writeFileSync(path.join("bench", "results", "video.json"), JSON.stringify(result, null, 2) + "\n");
console.log(JSON.stringify(result, null, 2));
