/**
 * Detections through the API with the real models: a licence plate in an image (exported as
 * image.json) and in a panning video (one continuous track in the session state).
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { coverage } from "@/lib/geometry";
import { runFfmpeg } from "@/server/media";
import { carSvg } from "./helpers/scenes";
import { fileUri, startServer, tempDir, type TestServer } from "./helpers/server";

const PLATE = { x: 300, y: 380, width: 200, height: 100 };

let s: TestServer;
let dir: string;
let scene: string;
beforeAll(async () => {
  dir = tempDir("detect");
  scene = path.join(dir, "car.png");
  await sharp(Buffer.from(carSvg(PLATE))).png().toFile(scene);
  s = await startServer();
});
afterAll(async () => {
  await s?.stop();
});

describe("licence plates through the API", () => {
  it("finds the plate of an image and exports it as image.json", async () => {
    const out = path.join(dir, "img") + "/";
    const r = await s.api("POST", "/api/v1/images:process", {
      inputUri: fileUri(scene),
      features: ["LICENSE_PLATE_DETECTION", "MEDIA_RENDER"],
      outputUri: fileUri(out) + "/",
      imageContext: { renderConfig: { exportMetadata: true } },
    });
    const op = await s.waitDone(r.body.name);
    expect(op.error).toBeUndefined();
    const meta = JSON.parse(fs.readFileSync(path.join(out, "image.json"), "utf8"));
    expect(meta.image).toMatchObject({ width: 800, height: 600 });
    const plates = meta.objects.filter((o: { type: string }) => o.type === "licensePlate");
    expect(plates.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...plates.map((p: { boundingBox: typeof PLATE }) => coverage(PLATE, p.boundingBox)))).toBeGreaterThanOrEqual(0.7);
    for (const p of plates) expect(p.score).toBeGreaterThan(0);
  });

  it("tracks a plate through a panning video without a gap", async () => {
    const video = path.join(dir, "pan.mp4");
    // a 640x480 window panning 40 px/s across the 800x600 scene for 2 s
    await runFfmpeg(["-loop", "1", "-framerate", "25", "-i", scene, "-t", "2", "-vf", "crop=640:480:'t*40':60,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast", video]);
    const bucket = path.join(dir, "state") + "/";
    const r = await s.api("POST", "/api/v1/videos:process", {
      inputUri: fileUri(video),
      features: ["LICENSE_PLATE_DETECTION"],
      outputUri: fileUri(bucket) + "/",
    });
    const op = await s.waitDone(r.body.name, 120_000);
    expect(op.error).toBeUndefined();
    const det = JSON.parse(fs.readFileSync(path.join(bucket, "detections.json"), "utf8"));
    expect(det.detectors).toContain("plates-ppocr");
    expect(det.profile).toMatchObject({ name: "gen6_standard" });
    const plateTracks = det.tracks.filter((t: { type: string }) => t.type === "licensePlate");
    expect(plateTracks).toHaveLength(1);
    const track = plateTracks[0];
    expect(track.firstFrame).toBe(0);
    expect(track.lastFrame).toBeGreaterThanOrEqual(47);
    const lines = fs.readFileSync(path.join(bucket, "objects.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const frames = new Set(lines.filter((l) => l.objects.some((o: { type: string }) => o.type === "licensePlate")).map((l) => l.frame));
    for (let f = 0; f < 50; f++) expect(frames.has(f), `frame ${f} has the plate`).toBe(true);
    // the box follows the plate: at frame n the plate is at x = 300 - 40 * n / 25 - crop offset
    for (const l of lines) {
      const o = l.objects.find((x: { type: string }) => x.type === "licensePlate");
      const truth = { x: PLATE.x - (40 * l.frame) / 25, y: PLATE.y - 60, width: PLATE.width, height: PLATE.height };
      expect(coverage(truth, o.boundingBox), `frame ${l.frame}`).toBeGreaterThanOrEqual(0.7);
    }
  });

  it("every feature has a detector: ID cards on a clip without any give an empty state", async () => {
    const bucket = path.join(dir, "state2") + "/";
    const video = path.join(dir, "pan.mp4");
    const r = await s.api("POST", "/api/v1/videos:process", { inputUri: fileUri(video), features: ["ID_DETECTION"], outputUri: fileUri(bucket) + "/" });
    const op = await s.waitDone(r.body.name);
    expect(op.error).toBeUndefined();
    const det = JSON.parse(fs.readFileSync(path.join(bucket, "detections.json"), "utf8"));
    expect(det.missingFeatures).toEqual([]);
    expect(det.detectors).toContain("ids-face-text");
    expect(det.tracks).toEqual([]);
  });
});
