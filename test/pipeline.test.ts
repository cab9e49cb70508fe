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
import { pipelineConfig } from "@/server/analytics/config";
import { Pipeline, type PipelineStats } from "@/server/analytics/pipeline";
import type { FrameOutput } from "@/server/analytics/stream";
import type { SensorEvent } from "@/server/analytics/sensors";
import { carSvg } from "./helpers/cars";
import { switchDatabase } from "./helpers/database";
import { useModelDataDir } from "./helpers/models";
import { ROOT, tempDir } from "./helpers/server";

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
