/**
 * The analytics pipeline's File entry point (issue 10, first part) against ground truth: a clip
 * made here of a drawn car driving across a street at a known speed (150 px/s), through the real
 * detector, tracker and sensors into stored events, read back by the Data API's aggregation.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deviceAggregate } from "@/server/data-api/query";
import { runFfmpeg } from "@/server/media";
import { resetS3Client } from "@/server/storage/s3";
import { pipelineConfig } from "@/server/analytics/config";
import { Pipeline, type PipelineStats } from "@/server/analytics/pipeline";
import type { FrameOutput } from "@/server/analytics/stream";
import type { SensorEvent } from "@/server/analytics/sensors";
import { carSvg } from "./helpers/cars";
import { switchDatabase } from "./helpers/database";
import { useModelDataDir } from "./helpers/models";
import { ROOT, tempDir } from "./helpers/server";
import { startAzurite, startS3rver } from "./helpers/storage-servers";

useModelDataDir("pipeline");

const FPS = 10;
const FRAMES = 37;
/** The car's centre in frame f: x = 212 + 15 f (150 px/s), drawn at 0.6 scale. */
const dxAt = (f: number) => -40 + 15 * f;

let dir = "";
let clip = "";
let restore: () => Promise<void>;

beforeAll(async () => {
  dir = tempDir("pipeline");
  for (let f = 0; f < FRAMES; f++) await sharp(Buffer.from(carSvg("#c0392b", "4KPM219", dxAt(f), 0.6))).png().toFile(path.join(dir, `f${String(f).padStart(3, "0")}.png`));
  clip = path.join(dir, "street.mp4");
  await runFfmpeg(["-framerate", String(FPS), "-i", path.join(dir, "f%03d.png"), "-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "18", clip]);
  restore = await switchDatabase("pipeline");
}, 180_000);

afterAll(async () => {
  await restore?.();
});

const SENSORS = {
  workspaceId: "ws",
  deviceId: "street-cam",
  streamId: "street",
  sensors: [
    { id: "gate", type: "COUNT", line: [[400, 0], [400, 500]] },
    { id: "radar", name: "speed", type: "SPEED", lines: [[[300, 0], [300, 500]], [[500, 0], [500, 500]]], distance: 4 },
    { id: "zone", type: "PRESENCE", region: [[350, 0], [450, 0], [450, 500], [350, 500]] },
    { id: "people", type: "COUNT", line: [[400, 0], [400, 500]], classes: ["person"] },
  ],
};

describe("File pipeline", () => {
  it("counts the car once with its direction, its speed within 10% and its presence within a frame", async () => {
    const start = "2026-11-23T10:00:00Z";
    const outputs: FrameOutput[] = [];
    const p = await Pipeline.create({ VIDEO_IN: clip, sensorsConfigFile: SENSORS, detectionMinConfidence: 0.15, startTime: start, enabledClasses: "car,bus,truck,motorbike", updateOnlyOnEvents: true }, { onOutput: (o) => void outputs.push(o) });
    const r: PipelineStats = await p.run();
    expect(r.framesAnalysed).toBe(FRAMES);
    const events = outputs.flatMap((o) => (o.sensorEvents ?? []) as Array<SensorEvent & { timeCollected: string; active?: boolean; numObjectsInRegion?: number }>);
    // updateOnlyOnEvents: only frames with events were emitted
    expect(outputs.length).toBeGreaterThan(0);
    expect(outputs.every((o) => (o.sensorEvents?.length ?? 0) > 0)).toBe(true);
    expect(r.events).toBe(events.length);
    const by = (id: string) => events.filter((e) => e.sensorId === id);
    const t = (e: { timeCollected: string }) => Date.parse(e.timeCollected) - Date.parse(start);
    // the centre crosses x = 400 between frames 12 and 13 (392 -> 407), left to right over a line drawn downwards: NORTH
    expect(by("gate").map((e) => [e.direction, e.value, e.objectType])).toEqual([["NORTH", 1, "car"]]);
    expect(t(by("gate")[0]!)).toBe(1300);
    expect(by("people")).toEqual([]); // counts persons only
    // 4 m in 200 px at 150 px/s: 3 m/s = 10.8 km/h
    const speed = by("radar");
    expect(speed).toHaveLength(1);
    expect(Math.abs(speed[0]!.value - 10.8) / 10.8).toBeLessThan(0.1);
    // inside x 350-450 from frame 10 (centre 362) until frame 16 (452): 1.0 s to 1.6 s
    const zone = by("zone");
    expect(zone.map((e) => [t(e), e.value])).toEqual([
      [expect.closeTo(1000, -2.1), 0],
      [expect.closeTo(1600, -2.1), expect.closeTo(0.6, 0.9)],
    ]);
    expect(zone[1]).toMatchObject({ active: false, numObjectsInRegion: 0 });
    // the car keeps one id from frame to frame; the gate event names it
    const ids = new Set(outputs.flatMap((o) => Object.keys(o.metaClasses.vehicles)));
    expect([...ids]).toEqual(["vehicle-1"]);
    // stored: the Data API sees them
    const rows = await deviceAggregate(new URL("http://x/data/query?startTime=2026-11-23T10:00:00Z&endTime=2026-11-23T10:01:00Z"), { deviceId: "street-cam", sensors: ["gate", "speed"], interval: "1 minute", functions: ["COUNT", "AVERAGE"] });
    expect(rows.map((w) => [w.sensorName, w.direction, w.values[0]!.value])).toEqual([
      ["gate", "NORTH", 1],
      ["speed", "NORTH", 1],
    ]);
  }, 180_000);

  it("with the tracker, a box filter and event images: events stored with tracks, frame and box JPEGs in the storage, media records", async () => {
    const media = tempDir("pipeline-media");
    const start = "2026-11-23T11:00:00Z";
    const p = await Pipeline.create({
      VIDEO_IN: clip,
      sensorsConfigFile: { ...SENSORS, deviceId: "street-cam-2", sensors: [SENSORS.sensors[0]] },
      detectionMinConfidence: 0.15,
      enabledClasses: "car",
      useTracker: true,
      trackerType: "cpuBest",
      // the street's upper half only; the car is inside it (a filter that left it out would leave no event)
      boxFilterConfig: [{ type: "roi", region: [0, 0, 1, 0.9], requiredOverlap: 50 }, { type: "size", subtype: "width", min: 40 }],
      saveEventImages: true,
      eventImageUri: `file://${media}`,
      startTime: start,
    });
    const stats = await p.run();
    expect(stats.events).toBe(1);
    const { sensorRecords } = await import("@/server/data-api/query");
    const { records } = await sensorRecords({ deviceId: "street-cam-2", sensors: ["gate"], startTime: start, endTime: "2026-11-23T11:01:00Z", withImages: true, withTracks: true });
    expect(records).toHaveLength(1);
    const r = records[0] as { frameImage: string; boundingBoxImage: string; track: Array<{ x: number; y: number; t: number }>; direction: string };
    expect(r.direction).toBe("NORTH");
    expect(r.frameImage).toMatch(/^\/media\/street\?mediaId=/);
    expect(r.boundingBoxImage).toMatch(/^\/media\/street\?mediaId=/);
    // the track: the car's centre moving right, one point per analysed frame up to the crossing
    expect(r.track.length).toBeGreaterThan(5);
    expect(r.track.at(-1)!.x).toBeGreaterThan(r.track[0]!.x);
    const { mediaBytes } = await import("@/server/data-api/media");
    const frame = await mediaBytes("street", new URL(`http://x${r.frameImage}`).searchParams.get("mediaId"));
    const box = await mediaBytes("street", new URL(`http://x${r.boundingBoxImage}`).searchParams.get("mediaId"));
    expect(frame.contentType).toBe("image/jpeg");
    expect((await sharp(frame.bytes).metadata()).width).toBe(800);
    expect((await sharp(box.bytes).metadata()).width).toBeLessThan(400);
    expect(fs.readdirSync(path.join(media, "street")).filter((f) => f.endsWith(".jpg"))).toHaveLength(2);
  }, 120_000);

  it("event images in S3 (s3rver) and Azure blobs (azurite): written under eventImageUri, served back by the Data API", async () => {
    const s3 = await startS3rver();
    const azure = await startAzurite();
    const saved = { ...process.env };
    Object.assign(process.env, s3.env);
    resetS3Client();
    try {
      const { sensorRecords } = await import("@/server/data-api/query");
      const { mediaBytes } = await import("@/server/data-api/media");
      const { listPrefix } = await import("@/server/storage");
      const sas = await azure.containerSasUrl("events", "cams/");
      const targets = [
        { name: "s3", uri: `s3://${s3.bucket}/events`, list: `s3://${s3.bucket}/events/` }, // no trailing "/": still a folder
        { name: "azure", uri: sas, list: sas },
      ];
      for (const [i, t] of targets.entries()) {
        const start = `2026-11-23T1${2 + i}:00:00Z`;
        const deviceId = `street-cam-${t.name}`;
        const p = await Pipeline.create({
          VIDEO_IN: clip,
          sensorsConfigFile: { ...SENSORS, deviceId, streamId: `street/${t.name}`, sensors: [SENSORS.sensors[0]] },
          detectionMinConfidence: 0.15,
          enabledClasses: "car",
          saveEventImages: true,
          eventImageUri: t.uri,
          startTime: start,
        });
        expect((await p.run()).events).toBe(1);
        const { records } = await sensorRecords({ deviceId, sensors: ["gate"], startTime: start, endTime: start.replace(":00:00Z", ":01:00Z"), withImages: true });
        const r = records[0] as { frameImage: string; boundingBoxImage: string };
        const id = (u: string) => new URL(`http://x${u}`).searchParams.get("mediaId");
        const frame = await mediaBytes(`street/${t.name}`, id(r.frameImage));
        expect((await sharp(frame.bytes).metadata()).width).toBe(800);
        expect((await sharp((await mediaBytes(`street/${t.name}`, id(r.boundingBoxImage))).bytes).metadata()).width).toBeLessThan(400);
        // both JPEGs sit in the stream's folder ("/" in the stream id made safe) of that storage
        const names = await listPrefix(t.list);
        expect(names.filter((n) => n.startsWith(`street_${t.name}/`) && n.endsWith(".jpg"))).toHaveLength(2);
      }
      expect(() => pipelineConfig({ VIDEO_IN: clip, eventImageUri: "ftp://host/x" })).toThrow(/eventImageUri: .*must be one of file:\/\/\//);
    } finally {
      process.env = saved;
      resetS3Client();
      await s3.stop();
      await azure.stop();
    }
  }, 180_000);

  it("runs from the command line: npm run pipeline -- --config FILE (a dry run prints the events)", () => {
    const cfg = path.join(dir, "pipeline.json");
    fs.writeFileSync(cfg, JSON.stringify({ VIDEO_IN: clip, sensorsConfigFile: SENSORS, detectionMinConfidence: 0.15, startTime: "2026-11-23T10:00:00Z", enabledClasses: "car" }));
    const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/pipeline.ts", "--config", cfg, "--dry-run"], { cwd: ROOT, encoding: "utf8", env: { ...process.env } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\[pipeline\] 37 frames analysed/);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ entryPoint: "File", framesAnalysed: 37, stored: false });
    expect(out.sensorEvents.map((e: { sensorId: string }) => e.sensorId).sort()).toEqual(["gate", "radar", "zone", "zone"]);
    fs.writeFileSync(cfg, JSON.stringify({ VIDEO_IN: clip, sensorsConfigFile: SENSORS, lptStringScoring: "median" }));
    const bad = spawnSync(process.execPath, ["--import", "tsx", "scripts/pipeline.ts", "--config", cfg], { cwd: ROOT, encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/lptStringScoring: must be min, max or average/);
  }, 120_000);

  it("refuses a bad configuration before starting, naming the parameter, the value and what is allowed", async () => {
    const bad = (cfg: Record<string, unknown>) => Pipeline.create(cfg).then(() => "started", (e: Error) => e.message);
    expect(() => pipelineConfig({ sensorsConfigFile: SENSORS })).toThrow(/VIDEO_IN: is required by the File entry point/);
    expect(() => pipelineConfig({ VIDEO_IN: "/nowhere.mp4" })).toThrow(/VIDEO_IN: "\/nowhere.mp4" is not a file/);
    expect(() => pipelineConfig({ VIDEO_IN: clip, detectionMinConfidence: 3 })).toThrow(/detectionMinConfidence: detectionMinConfidence must be from 0 to 1 \(got 3\)/);
    expect(() => pipelineConfig({ VIDEO_IN: clip, detectionMinConfidenc: 0.3 })).toThrow(/detectionMinConfidenc is not a pipeline parameter/);
    expect(() => pipelineConfig({ VIDEO_IN: clip, entryPoint: "Webcam" })).toThrow(/entryPoint: "Webcam" is not an entry point; allowed: File \(VehicleAnalyticsFile.yaml\)/);
    expect(() => pipelineConfig({ VIDEO_IN: clip, entryPoint: "VehicleAnalyticsRTSP.yaml" })).toThrow(/VIDEO_IN: ".*" is not an rtsp:\/\/ URL/);
    expect(() => pipelineConfig({ VIDEO_IN: clip, trackerType: "gpu" })).toThrow(/trackerType must be one of cpuBest, cpuFast, cpuFaster, cpuFastest \(got "gpu"\)/);
    expect(() => pipelineConfig({ VIDEO_IN: clip, debugSettings: "printJson,verbose" })).toThrow(/each entry of debugSettings must be one of eventAnalytics, OSD/);
    expect(() => pipelineConfig({ VIDEO_IN: clip, amqpHost: "rabbit:5672" })).toThrow(/amqpHost: "rabbit:5672" must be a host name or address only/);
    expect(() => pipelineConfig({ VIDEO_IN: clip, extensionModules: "missing.mjs" })).toThrow(/extensionModules\[0\]: "missing.mjs" is not a file/);
    // secrets never appear in the message: passwords, a SAS signature
    const secretless = (cfg: Record<string, unknown>) => {
      try {
        pipelineConfig({ VIDEO_IN: clip, ...cfg });
      } catch (e) {
        return (e as Error).message;
      }
      return "accepted";
    };
    expect(secretless({ amqpPassword: 987654 })).toBe('pipeline configuration: amqpPassword: amqpPassword must be a string (got "***")');
    const sas = secretless({ eventImageUri: "https://example.net/c/x?token=S3CRETS1G" }); // no SAS: plain http, refused
    expect(sas).toMatch(/eventImageUri: a plain http\(s\) URL cannot be written to/);
    expect(sas).not.toContain("S3CRETS1G");
    // text values from hand-written YAML are read as their types
    expect(pipelineConfig({ VIDEO_IN: clip, useTracker: "true", fpsLimit: "5" })).toMatchObject({ useTracker: true, fpsLimit: 5, entryPoint: "File", updateOnlyOnChange: true, lptStabilizationStrategy: "remove" });
    expect(await bad({ VIDEO_IN: clip, detectionModel: "yolo-cars" })).toMatch(/detectionModel: "yolo-cars" is not a model here; allowed: gen5..gen7 names such as gen7es/);
    expect(await bad({ VIDEO_IN: clip, sensorsConfigFile: { ...SENSORS, sensors: [{ id: "x", type: "COUNT" }] } })).toMatch(/sensorsConfigFile: sensors\.0\.line/);
    fs.writeFileSync(path.join(dir, "bad.json"), "{nope");
    expect(await bad({ VIDEO_IN: clip, sensorsConfigFile: path.join(dir, "bad.json") })).toMatch(/cannot be read as JSON or YAML/);
    expect(await bad({ VIDEO_IN: clip, boxFilterConfig: [{ type: "roi", region: [0, 0, 1, 1], behavior: "inside" }] })).toMatch(/boxFilterConfig\[0\]\.behavior: behavior must be boxInRoi or roiInBox \(got "inside"\)/);
    expect(await bad({ VIDEO_IN: clip, boxFilterConfig: [{ type: "size", subtype: "volume" }] })).toMatch(/subtype must be dimension, width, height, area or aspectRatio/);
    const ext = path.join(dir, "noop.mjs");
    fs.writeFileSync(ext, "export function configure() {}\n");
    expect(await bad({ VIDEO_IN: clip, extensionModules: ext })).toMatch(/exports no process\(tick, data, frame\) function/);
    expect(await bad({ VIDEO_IN: clip, lptFilter: "mars" })).toMatch(/lptFilter: "mars" is not a region group; known: us, eu/);
  });
});

/**
 * Ground truth with real photos: two people (crops of @vladmandic/face-api's demo photos, shipped in
 * the npm package) moved across a real background (the ceiling of @vladmandic/human's party photo)
 * at 200 px/s, 10 fps: one walks left to right, then the other right to left. Lines sit midway
 * between two frames' positions, so the truth is known to the frame.
 */
describe("people from real photos", () => {
  const PKG = path.join(ROOT, "node_modules", "@vladmandic");
  const W = 800;
  const H = 600;
  const FRAMES_PEOPLE = 73;
  /** Person A's centre x in frame f (frames 0-32), person B's (frames 40-72). */
  const ax = (f: number) => 80 + 20 * f;
  const bx = (f: number) => 720 - 20 * (f - 40);
  let walk = "";

  beforeAll(async () => {
    const d = tempDir("pipeline-people");
    const bg = await sharp(path.join(PKG, "human", "assets", "samples.jpg")).extract({ left: 150, top: 190, width: 1130, height: 210 }).resize(W, H, { fit: "fill" }).raw().toBuffer();
    const patch = async (file: string, left: number, width: number, height: number) => sharp(path.join(PKG, "face-api", "demo", file)).extract({ left, top: 0, width, height }).resize({ height: 360 }).png().toBuffer();
    const a = await patch("sample3.jpg", 1000, 450, 1350);
    // the second walker: the same person photographed, mirrored (walking the other way)
    const b = await sharp(a).flop().png().toBuffer();
    const aw = (await sharp(a).metadata()).width!;
    const bw = aw;
    for (let f = 0; f < FRAMES_PEOPLE; f++) {
      const layers = [];
      if (f <= 32) layers.push({ input: a, left: Math.round(ax(f) - aw / 2), top: 120 });
      if (f >= 40) layers.push({ input: b, left: Math.round(bx(f) - bw / 2), top: 120 });
      await sharp(bg, { raw: { width: W, height: H, channels: 3 } }).composite(layers).png().toFile(path.join(d, `p${String(f).padStart(3, "0")}.png`));
    }
    walk = path.join(d, "walk.mp4");
    await runFfmpeg(["-framerate", "10", "-i", path.join(d, "p%03d.png"), "-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "18", walk]);
  }, 180_000);
  it("counts both walkers with their directions, the speed within 10%, presence within a frame, and nothing for a car-only sensor", async () => {
    const start = "2026-11-24T08:00:00Z";
    const sensors = {
      workspaceId: "ws",
      deviceId: "lobby-cam",
      streamId: "lobby",
      sensors: [
        { id: "door", type: "COUNT", line: [[410, 0], [410, H]], classes: ["person"] },
        { id: "pace", type: "SPEED", lines: [[[250, 0], [250, H]], [[570, 0], [570, H]]], distance: 6.4, unit: "m/s", classes: ["person"] },
        { id: "desk", type: "PRESENCE", region: [[450, 0], [650, 0], [650, H], [450, H]], classes: ["person"] },
        { id: "cars", type: "COUNT", line: [[410, 0], [410, H]], classes: ["car"] },
      ],
    };
    const events: Array<Record<string, unknown> & { sensorId: string; timeCollected: string; value: number; direction: string | null }> = [];
    const p = await Pipeline.create({ VIDEO_IN: walk, sensorsConfigFile: sensors, enabledClasses: "person,car", detectionMinConfidence: 0.25, startTime: start, storeEvents: false }, { onOutput: (o) => void events.push(...((o.sensorEvents ?? []) as never[])) });
    const stats = await p.run();
    expect(stats.framesAnalysed).toBe(FRAMES_PEOPLE);
    const t = (e: { timeCollected: string }) => Date.parse(e.timeCollected) - Date.parse(start);
    const by = (id: string) => events.filter((e) => e.sensorId === id);
    const near = (ms: number, truth: number) => Math.abs(ms - truth) <= 100; // one frame
    // A crosses x = 410 between frames 16 and 17 going right (NORTH), B between 55 and 56 going left
    expect(by("door").map((e) => [e.direction, e.objectType])).toEqual([
      ["NORTH", "person"],
      ["SOUTH", "person"],
    ]);
    expect(by("door").map((e, i) => near(t(e), [1700, 5600][i]!))).toEqual([true, true]);
    expect(by("cars")).toEqual([]);
    // 6.4 m in 320 px at 200 px/s: 4 m/s, both ways
    expect(by("pace").map((e) => e.direction)).toEqual(["NORTH", "SOUTH"]);
    for (const e of by("pace")) expect(Math.abs(e.value - 4) / 4).toBeLessThan(0.1);
    // inside x 450-650: A frames 19-28 (out at 29), B frames 44-53 (out at 54): 1.0 s each
    const desk = by("desk");
    expect(desk.map((e) => [e.value === 0 ? "in" : "out", e.active])).toEqual([["in", true], ["out", false], ["in", true], ["out", false]]);
    expect(desk.map((e, i) => near(t(e), [1900, 2900, 4400, 5400][i]!))).toEqual([true, true, true, true]);
    for (const e of [desk[1]!, desk[3]!]) expect(Math.abs(e.value - 1.0)).toBeLessThanOrEqual(0.2 + 1e-9);
    // two people, two ids, in metaClasses.people
    expect(new Set(events.filter((e) => e.sensorId === "door").map((e) => e.uniqueId)).size).toBe(2);
  }, 180_000);
});

