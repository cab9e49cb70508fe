/**
 * Analytics sensors (issue 10, groundwork): line crossings with their direction, speeds between
 * two lines, lengths on a line, presence with the spec's fields and transitions, collisions,
 * class filters and the configuration's errors, on tracks moved frame by frame.
 */
import { describe, expect, it } from "vitest";
import { crossing, inside, parseSensors, SensorEngine, type TrackedObject } from "@/server/analytics/sensors";

const box = (cx: number, cy: number, w = 20, h = 20) => ({ x: cx - w / 2, y: cy - h / 2, width: w, height: h });
const FRAME = { width: 1000, height: 600 };

/** Runs an engine over frames at `fps`; each frame's tracks from `at(frame)`. */
function run(engine: SensorEngine, frames: number, fps: number, at: (f: number) => TrackedObject[]) {
  const out = [];
  for (let f = 0; f < frames; f++) out.push(...engine.update(Math.round((f * 1000) / fps), at(f)));
  return out;
}

describe("geometry", () => {
  it("crossing: +1 from the line's right to its left (y down), -1 back, 0 when missing the segment", () => {
    const a: [number, number] = [0, 100];
    const b: [number, number] = [200, 100]; // drawn left to right: its right side is below on screen
    expect(crossing(a, b, [50, 120], [50, 80])).toBe(1); // moving up the screen: NORTH
    expect(crossing(a, b, [50, 80], [50, 120])).toBe(-1);
    expect(crossing(a, b, [250, 120], [250, 80])).toBe(0); // beside the segment
    expect(crossing(a, b, [50, 120], [60, 110])).toBe(0); // same side
    expect(crossing(a, b, [50, 120], [50, 100])).toBe(1); // ending on the line counts...
    expect(crossing(a, b, [50, 100], [50, 80])).toBe(0); // ...once
    expect(inside([[0, 0], [10, 0], [10, 10], [0, 10]], [5, 5])).toBe(true);
    expect(inside([[0, 0], [10, 0], [10, 10], [0, 10]], [15, 5])).toBe(false);
  });
});

describe("sensors", () => {
  it("COUNT: each crossing once, with its direction, only for the classes named", () => {
    const engine = new SensorEngine(parseSensors({ deviceId: "cam", streamId: "s", sensors: [{ id: "gate", type: "COUNT", line: [[0, 300], [1000, 300]], classes: ["car"] }] }), FRAME);
    // car 1 drives up the screen through the line, car 2 down, a person up (not counted)
    const events = run(engine, 30, 10, (f) => [
      { id: 1, type: "car", box: box(200, 500 - f * 15) },
      { id: 2, type: "car", box: box(600, 100 + f * 15) },
      { id: 3, type: "person", box: box(800, 500 - f * 15) },
    ]);
    expect(events.map((e) => [e.uniqueId, e.direction, e.value, e.sensorType])).toEqual([
      [1, "NORTH", 1, "COUNT"],
      [2, "SOUTH", 1, "COUNT"],
    ]);
    expect(events.find((e) => e.uniqueId === 1)!.timeMs).toBe(1400); // centre from y 290 at frame 14 (500 - 14 * 15)
  });

  it("SPEED: the time between two lines a known distance apart, within 1% at 25 fps", () => {
    const engine = new SensorEngine(parseSensors({ deviceId: "cam", streamId: "s", sensors: [{ id: "v", type: "SPEED", lines: [[[100, 0], [100, 600]], [[900, 0], [900, 600]]], distance: 20 }] }), FRAME);
    // 800 px = 20 m; the car moves 16 px a frame at 25 fps = 400 px/s = 10 m/s = 36 km/h
    const events = run(engine, 70, 25, (f) => [{ id: 7, type: "car", box: box(20 + f * 16, 300) }]);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ sensorType: "SPEED", direction: "NORTH", uniqueId: 7, data: { unit: "km/h" } });
    expect(events[0]!.value).toBeGreaterThan(36 * 0.99);
    expect(events[0]!.value).toBeLessThan(36 * 1.01);
  });

  it("FISH: the length of what crosses the line, in metres", () => {
    const engine = new SensorEngine(parseSensors({ deviceId: "cam", streamId: "s", sensors: [{ id: "fish", type: "FISH", line: [[500, 0], [500, 600]], metersPerPixel: 0.005 }] }), FRAME);
    const events = run(engine, 40, 10, (f) => [{ id: 4, type: "fish", box: box(100 + f * 20, 300, 120, 40) }]);
    expect(events).toHaveLength(1);
    expect(events[0]!.value).toBeCloseTo(0.6, 5); // 120 px x 5 mm
    // walking the line down the screen, its right side is the screen's left: left to right is NORTH
    expect(events[0]).toMatchObject({ direction: "NORTH", data: { unit: "m" } });
  });

  it("PRESENCE: entries and exits with the spec's fields; the region's own active period", () => {
    const engine = new SensorEngine(
      parseSensors({ deviceId: "cam", streamId: "s", relative: true, sensors: [{ id: "door", type: "PRESENCE", region: [[0.4, 0], [0.6, 0], [0.6, 1], [0.4, 1]], classes: ["person"] }] }),
      FRAME,
    );
    // person 1 inside for frames 5..14, person 2 for frames 10..24 (10 fps)
    const events = run(engine, 30, 10, (f) => [
      { id: 1, type: "person", box: box(f >= 5 && f < 15 ? 500 : 100, 300) },
      { id: 2, type: "person", box: box(f >= 10 && f < 25 ? 500 : 900, 300) },
    ]);
    const rows = events.map((e) => [e.timeMs, e.uniqueId, e.value, e.data.active, e.data.numObjectsInRegion, e.data.startOn, e.data.stopOn, e.data.timeOn]);
    expect(rows).toEqual([
      [500, 1, 0, true, 1, 500, undefined, undefined],
      [1000, 2, 0, true, 2, 500, undefined, undefined],
      [1500, 1, 1, true, 1, 500, undefined, undefined],
      [2500, 2, 1.5, false, 0, 500, 2500, 2],
    ]);
    expect(events[3]!.data.object).toEqual({ enteredOn: 1000, exitOn: 2500, objectType: "person", uniqueId: 2 });
  });

  it("COLLISION: the seconds two or more objects share the region", () => {
    const engine = new SensorEngine(parseSensors({ deviceId: "cam", streamId: "s", sensors: [{ id: "x", type: "COLLISION", region: [[400, 0], [600, 0], [600, 600], [400, 600]] }] }), FRAME);
    const events = run(engine, 30, 10, (f) => [
      { id: 1, type: "car", box: box(f >= 5 && f < 20 ? 500 : 100, 300) },
      { id: 2, type: "car", box: box(f >= 10 && f < 25 ? 500 : 900, 300) },
    ]);
    expect(events.map((e) => [e.timeMs, e.value])).toEqual([[2000, 1]]);
  });

  it("refuses a bad configuration naming the field", () => {
    expect(() => parseSensors({ deviceId: "cam", streamId: "s", sensors: [{ id: "g", type: "COUNTER", line: [[0, 0], [1, 1]] }] })).toThrow(/sensors\.0\.type: type must be COUNT, SPEED, FISH, PRESENCE or COLLISION/);
    expect(() => parseSensors({ deviceId: "cam", streamId: "s", sensors: [{ id: "v", type: "SPEED", lines: [[[0, 0], [1, 1]], [[2, 2], [3, 3]]], distance: 0 }] })).toThrow(/sensors\.0\.distance: distance must be above 0 metres/);
    expect(() => parseSensors({ deviceId: "cam", streamId: "s", sensors: [{ id: "r", type: "PRESENCE", region: [[0, 0], [1, 1]] }] })).toThrow(/region needs at least 3 points/);
    expect(() => parseSensors({ deviceId: "cam", streamId: "s", sensors: [{ id: "a", type: "COUNT", line: [[0, 0], [1, 1]] }, { id: "a", type: "COUNT", line: [[0, 0], [1, 1]] }] })).toThrow(/sensor id "a" is used twice/);
  });
});
