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
import { pipelineConfig, runFilePipeline } from "@/server/analytics/pipeline";
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
    const r = await runFilePipeline({ VIDEO_IN: clip, sensorsConfigFile: SENSORS, detectionMinConfidence: 0.15, startTime: start });
    expect(r.analysedFrames).toBe(FRAMES);
    const by = (id: string) => r.events.filter((e) => e.sensorId === id);
    // the centre crosses x = 400 between frames 12 and 13 (392 -> 407), left to right over a line drawn downwards: NORTH
    expect(by("gate").map((e) => [e.direction, e.value, e.objectType])).toEqual([["NORTH", 1, "car"]]);
    expect(by("gate")[0]!.timeCollected.getTime() - Date.parse(start)).toBe(1300);
    expect(by("people")).toEqual([]); // counts persons only
    // 4 m in 200 px at 150 px/s: 3 m/s = 10.8 km/h
    const speed = by("radar");
    expect(speed).toHaveLength(1);
    expect(Math.abs(speed[0]!.value - 10.8) / 10.8).toBeLessThan(0.1);
    // inside x 350-450 from frame 10 (centre 362) until frame 16 (452): 1.0 s to 1.6 s
    const zone = by("zone");
    expect(zone.map((e) => [e.timeCollected.getTime() - Date.parse(start), e.value])).toEqual([
      [expect.closeTo(1000, -2.1), 0],
      [expect.closeTo(1600, -2.1), expect.closeTo(0.6, 0.9)],
    ]);
    expect(zone[1]!.data).toMatchObject({ active: false, numObjectsInRegion: 0 });
    // stored: the Data API sees them
    const rows = await deviceAggregate(new URL("http://x/data/query?startTime=2026-11-23T10:00:00Z&endTime=2026-11-23T10:01:00Z"), { deviceId: "street-cam", sensors: ["gate", "speed"], interval: "1 minute", functions: ["COUNT", "AVERAGE"] });
    expect(rows.map((w) => [w.sensorName, w.direction, w.values[0]!.value])).toEqual([
      ["gate", "NORTH", 1],
      ["speed", "NORTH", 1],
    ]);
  }, 180_000);

  it("runs from the command line: npm run pipeline -- --config FILE (a dry run prints the events)", () => {
    const cfg = path.join(dir, "pipeline.json");
    fs.writeFileSync(cfg, JSON.stringify({ VIDEO_IN: clip, sensorsConfigFile: SENSORS, detectionMinConfidence: 0.15, startTime: "2026-11-23T10:00:00Z" }));
    const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/pipeline.ts", "--config", cfg, "--dry-run"], { cwd: ROOT, encoding: "utf8", env: { ...process.env } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\[pipeline\] 100% \(37\/37 frames\)/);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ analysedFrames: 37, stored: false, bySensor: { gate: 1, speed: 1, zone: 2 } });
    fs.writeFileSync(cfg, JSON.stringify({ VIDEO_IN: clip, sensorsConfigFile: SENSORS, lptStringScoring: "median" }));
    const bad = spawnSync(process.execPath, ["--import", "tsx", "scripts/pipeline.ts", "--config", cfg], { cwd: ROOT, encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/lptStringScoring: must be min, max or average/);
  }, 120_000);

  it("refuses a bad configuration before starting, naming the parameter", () => {
    expect(() => pipelineConfig({ sensorsConfigFile: SENSORS })).toThrow(/VIDEO_IN is required/);
    expect(() => pipelineConfig({ VIDEO_IN: "/nowhere.mp4", sensorsConfigFile: SENSORS })).toThrow(/VIDEO_IN "\/nowhere.mp4" is not a file/);
    expect(() => pipelineConfig({ VIDEO_IN: clip })).toThrow(/sensorsConfigFile is required/);
    expect(() => pipelineConfig({ VIDEO_IN: clip, sensorsConfigFile: SENSORS, detectionMinConfidence: 3 })).toThrow(/detectionMinConfidence must be from 0 to 1 \(got 3\)/);
    expect(() => pipelineConfig({ VIDEO_IN: clip, sensorsConfigFile: { ...SENSORS, sensors: [{ id: "x", type: "COUNT" }] } })).toThrow(/sensorsConfigFile: sensors\.0\.line/);
    fs.writeFileSync(path.join(dir, "bad.json"), "{nope");
    expect(() => pipelineConfig({ VIDEO_IN: clip, sensorsConfigFile: path.join(dir, "bad.json") })).toThrow(/cannot be read as JSON/);
  });
});
