/**
 * The video detection schedule (server/vision/schedule.ts): band and round-robin geometry, head
 * extension, and clips made with ffmpeg through detectVideo: a moving group of small faces (only
 * the expensive face passes see them) and a moving plate must be covered by a track box in every
 * frame, and an empty clip gives no tracks.
 */
import path from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { type Box, coverage } from "@/lib/geometry";
import { probe, runFfmpeg } from "@/server/media";
import { expandTracks, type Track } from "@/server/tracking";
import { DEFAULT_ENGINE_SETTINGS } from "@/server/vision/engine";
import { bands, extendHead, roundRobin, splitEven, VideoSchedule } from "@/server/vision/schedule";
import { detectVideo } from "@/server/vision/video";
import { useModelDataDir } from "./helpers/models";
import { carSvg } from "./helpers/scenes";

// Clips are written into the same throwaway data dir.
const data = useModelDataDir("schedule", /^(faceboxes|blazeface-back|centernet)-[0-9a-f]{12}\.onnx$/);

describe("schedule geometry", () => {
  it("cuts the frame into tile-high bands that cover it, overlapping", () => {
    const b = bands(1280, 720, 256, 24);
    expect(b).toHaveLength(3);
    expect(b[0]).toEqual({ x: 0, y: 0, width: 1280, height: 256 });
    expect(b[2]!.y + b[2]!.height).toBe(720);
    for (let i = 1; i < b.length; i++) expect(b[i - 1]!.y + b[i - 1]!.height - b[i]!.y).toBeGreaterThanOrEqual(24);
    expect(bands(720, 1280, 256, 24).every((r) => r.height === 1280 && r.width === 256)).toBe(true);
    expect(bands(200, 100, 256, 24)).toEqual([{ x: 0, y: 0, width: 200, height: 100 }]);
    const p = splitEven(1280, 720, 3, 96);
    expect(p[0]!.y).toBe(0);
    expect(p[2]!.y + p[2]!.height).toBe(720);
    expect(p[0]!.y + p[0]!.height - p[1]!.y).toBeGreaterThanOrEqual(96);
  });

  it("round-robin visits every item once per period", () => {
    for (const [count, period] of [
      [3, 3],
      [3, 10],
      [5, 3],
      [1, 4],
    ] as const) {
      for (let start = 0; start < 2 * period; start++) {
        const seen = new Map<number, number>();
        for (let k = start; k < start + period; k++) for (const i of roundRobin(count, period, k)) seen.set(i, (seen.get(i) ?? 0) + 1);
        expect([...seen.keys()].sort()).toEqual(Array.from({ length: count }, (_, i) => i));
        expect([...seen.values()].every((n) => n === 1)).toBe(true);
      }
    }
  });

  it("keeps sweep periods under half of maxMissed, every band on the first frame", () => {
    const s = new VideoSchedule({ width: 1280, height: 720, scale: 1 }, 3 / 25, 1, ["FACE_DETECTION", "LICENSE_PLATE_DETECTION"]);
    expect(s.facePeriod).toBe(3); // 0.36 s
    expect(s.faceRegions(0)).toEqual(s.faceBands);
    const fast = new VideoSchedule({ width: 1280, height: 720, scale: 1 }, 1 / 25, 13 / 25, ["FACE_DETECTION"]);
    expect(fast.facePeriod * (1 / 25)).toBeLessThanOrEqual(13 / 25 / 2 + 1e-9);
    expect(s.headFrames("face", 3)).toBe(8);
    expect(s.headFrames("person", 3)).toBe(0);
  });

  it("extends a track's head, moving the first box back by its velocity", () => {
    const t: Track = {
      id: 1,
      type: "face",
      firstFrame: 10,
      lastFrame: 16,
      keyframes: [
        { frame: 10, box: { x: 100, y: 0, width: 10, height: 10 }, score: null, source: "predicted" },
        { frame: 12, box: { x: 104, y: 0, width: 10, height: 10 }, score: 0.9, source: "detected" },
        { frame: 15, box: { x: 110, y: 0, width: 10, height: 10 }, score: 0.9, source: "detected" },
        { frame: 16, box: { x: 112, y: 0, width: 10, height: 10 }, score: null, source: "predicted" },
      ],
    };
    const e = extendHead(t, 8);
    expect(e.firstFrame).toBe(4);
    expect(e.keyframes[0]).toEqual({ frame: 4, box: { x: 88, y: 0, width: 10, height: 10 }, score: null, source: "predicted" });
    expect(e.keyframes.slice(1)).toEqual(t.keyframes.slice(1));
    expect(extendHead(t, 1)).toBe(t);
  });
});

/** Frames (0..n-1) in which no track of `type` covers >= 70% of `at(frame)`. */
function uncovered(tracks: Track[], type: string, n: number, at: (frame: number) => Box): number[] {
  const boxes = expandTracks(
    tracks.filter((t) => t.type === type),
    n,
  );
  return boxes.flatMap((bs, f) => (bs.some((b) => coverage(at(f), b.box) >= 0.7) ? [] : [f]));
}

describe("detectVideo with the sweep schedule", () => {
  const settings = { ...DEFAULT_ENGINE_SETTINGS, profileName: "gen6_standard" };

  it("covers three small moving faces (25 px) in every frame, one track each", async () => {
    // sample1 shrunk to 192 px wide (faces ~25 px high), moving right 80 px/s on a 1280x720 canvas.
    const k = 0.1;
    const small = path.join(data.dir(), "faces.png");
    await sharp(path.join(process.cwd(), "node_modules/@vladmandic/face-api/demo/sample1.jpg")).rotate().resize(192).png().toFile(small);
    const clip = path.join(data.dir(), "faces.mp4");
    await runFfmpeg(["-f", "lavfi", "-i", "color=c=0x5a646e:s=1280x720:r=25:d=2", "-loop", "1", "-i", small, "-filter_complex", "[0][1]overlay=x='500+t*80':y=400:shortest=1,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "12", clip]);
    const media = await probe(clip);
    const n = media.video.frameCount;
    expect(n).toBe(50);
    const faces: Box[] = [
      { x: 400, y: 350, width: 220, height: 250 },
      { x: 820, y: 400, width: 220, height: 260 },
      { x: 1450, y: 200, width: 240, height: 270 },
    ];
    const r = await detectVideo(clip, media, ["FACE_DETECTION"], settings, { schedule: "sweep" });
    for (const f of faces) {
      const at = (frame: number) => ({ x: 500 + (80 * frame) / 25 + f.x * k, y: 400 + f.y * k, width: f.width * k, height: f.height * k });
      expect(uncovered(r.tracks, "face", n, at), JSON.stringify(f)).toEqual([]);
      // one track covers it throughout (ids are continuous)
      const covering = r.tracks.filter((t) => t.type === "face" && uncovered([t], "face", n, at).length === 0);
      expect(covering.length, JSON.stringify(f)).toBeGreaterThanOrEqual(1);
    }
  }, 180_000);

  it("covers a moving plate in every frame", async () => {
    const scene = path.join(data.dir(), "scene.png");
    await sharp(Buffer.from(carSvg({ x: 300, y: 300, width: 200, height: 100 })))
      .resize(1600, 1200)
      .png()
      .toFile(scene);
    const clip = path.join(data.dir(), "plate.mp4");
    // the crop moves 100 px/s right: the plate moves 100 px/s left in the frame
    await runFfmpeg(["-loop", "1", "-framerate", "25", "-i", scene, "-t", "2", "-vf", "crop=1280:720:'t*100':100,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast", clip]);
    const media = await probe(clip);
    const n = media.video.frameCount;
    const r = await detectVideo(clip, media, ["LICENSE_PLATE_DETECTION"], settings, { schedule: "sweep" });
    expect(uncovered(r.tracks, "licensePlate", n, (f) => ({ x: 600 - (100 * f) / 25, y: 600 - 100, width: 400, height: 200 }))).toEqual([]);
  }, 180_000);

  it("finds nothing in an empty clip", async () => {
    const clip = path.join(data.dir(), "empty.mp4");
    await runFfmpeg(["-f", "lavfi", "-i", "color=c=0x7a8a9a:s=1280x720:r=25:d=1", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", clip]);
    const media = await probe(clip);
    const r = await detectVideo(clip, media, ["FACE_DETECTION", "LICENSE_PLATE_DETECTION"], settings, { schedule: "sweep" });
    expect(r.tracks).toEqual([]);
    expect(r.framesDetected).toBe(Math.ceil(media.video.frameCount / 3));
  }, 120_000);
});
