import { describe, expect, it } from "vitest";
import {
  activeAt,
  boxAt,
  bulkDecide,
  clampBox,
  commit,
  drawnTrack,
  frameOf,
  history,
  mergeTracks,
  neighbourKeyframe,
  nextToReview,
  redo,
  removeKeyframe,
  setKeyframe,
  setSpan,
  splitTrack,
  timeOf,
  undo,
  type Track,
} from "@/lib/editor/model";

const box = (x: number, y = 0, width = 10, height = 10) => ({ x, y, width, height });
const track = (over: Partial<Track> = {}): Track => ({
  id: 1,
  type: "face",
  firstFrame: 0,
  lastFrame: 20,
  keyframes: [
    { frame: 0, box: box(0), score: 0.9, source: "detected" },
    { frame: 10, box: box(100), score: 0.8, source: "detected" },
    { frame: 20, box: box(100, 50), score: 0.7, source: "detected" },
  ],
  ...over,
});

describe("editor track model", () => {
  it("interpolates boxes linearly between keyframes and has none outside the span", () => {
    const t = track();
    expect(boxAt(t, 5)).toEqual(box(50));
    expect(boxAt(t, 15)).toEqual(box(100, 25));
    expect(boxAt(t, 21)).toBeNull();
    expect(boxAt({ ...t, firstFrame: 0, lastFrame: 30 }, 25)).toEqual(box(100, 50));
    expect(activeAt([t, { ...t, id: 2, firstFrame: 30, lastFrame: 40 }], 12).map((x) => x.id)).toEqual([1]);
  });

  it("makes a manual keyframe on every change, keeps keyframes sorted and extends the span", () => {
    const t = setKeyframe(track(), 5, box(10));
    expect(t.keyframes.map((k) => k.frame)).toEqual([0, 5, 10, 20]);
    expect(t.keyframes[1]).toMatchObject({ source: "manual", score: null });
    expect(boxAt(t, 7)!.x).toBeCloseTo(10 + (90 * 2) / 5);
    const replaced = setKeyframe(t, 10, box(7));
    expect(replaced.keyframes.map((k) => k.frame)).toEqual([0, 5, 10, 20]);
    expect(replaced.keyframes[2]!.box.x).toBe(7);
    expect(setKeyframe(t, 25, box(1)).lastFrame).toBe(25);
    expect(removeKeyframe(t, 5).keyframes.map((k) => k.frame)).toEqual([0, 10, 20]);
  });

  it("sets in and out frames without a jump, splits and merges", () => {
    const t = setSpan(track(), 5, 15)!;
    expect(t.keyframes.map((k) => k.frame)).toEqual([5, 10, 15]);
    expect(boxAt(t, 5)).toEqual(box(50));
    expect(boxAt(t, 15)).toEqual(box(100, 25));
    expect(setSpan(track(), 10, 5)).toBeNull();
    const [a, b] = splitTrack(track(), 12, 7)!;
    expect([a.firstFrame, a.lastFrame, b.id, b.firstFrame, b.lastFrame]).toEqual([0, 11, 7, 12, 20]);
    expect(boxAt(b, 12)).toEqual(boxAt(track(), 12));
    expect(splitTrack(track(), 0, 7)).toBeNull();
    const m = mergeTracks(a, b);
    expect([m.id, m.firstFrame, m.lastFrame]).toEqual([1, 0, 20]);
    expect(boxAt(m, 15)).toEqual(boxAt(track(), 15));
  });

  it("draws static tracks over the whole video and others from the current frame", () => {
    const s = drawnTrack(9, "licensePlate", 40, box(5), "static", 100);
    expect([s.firstFrame, s.lastFrame, s.manual]).toEqual([0, 99, true]);
    expect(boxAt(s, 77)).toEqual(box(5));
    const a = drawnTrack(9, "face", 40, box(5), "auto", 100);
    expect([a.firstFrame, a.lastFrame]).toEqual([40, 40]);
    expect(clampBox(box(-5, 95, 20, 20), 100, 100)).toEqual(box(0, 80, 20, 20));
  });

  it("accepts and rejects in bulk by class and score, and finds the next track to review", () => {
    const ts = [track({ id: 1 }), track({ id: 2, type: "licensePlate", keyframes: [{ frame: 0, box: box(0), score: 0.3, source: "detected" }] }), track({ id: 3, firstFrame: 5, keyframes: [{ frame: 5, box: box(0), score: 0.2, source: "detected" }] })];
    const rejected = bulkDecide(ts, { type: "all", below: 0.5 }, false);
    expect(rejected.map((t) => t.enabled)).toEqual([undefined, false, false]);
    expect(rejected[0]).toBe(ts[0]);
    const plates = bulkDecide(ts, { type: "licensePlate" }, true);
    expect(plates[1]).toMatchObject({ reviewed: true });
    expect(nextToReview(ts, null, 0.5)!.id).toBe(1);
    expect(nextToReview(ts.map((t) => ({ ...t, reviewed: true })), 1, 0.5)!.id).toBe(2);
    expect(neighbourKeyframe(track(), 10, 1)).toBe(20);
    expect(neighbourKeyframe(track(), 10, -1)).toBe(0);
  });

  it("undoes and redoes one step at a time", () => {
    let h = history([1]);
    h = commit(h, [2]);
    h = commit(h, [3]);
    h = undo(h);
    expect(h.present).toEqual([2]);
    h = redo(h);
    expect(h.present).toEqual([3]);
    h = undo(undo(h));
    h = commit(h, [4]);
    expect(h.future).toEqual([]);
    expect(redo(h)).toBe(h);
  });

  it("maps media times to frames and back", () => {
    for (const fps of [25, 29.97, 30]) for (const f of [0, 1, 17, 1799]) expect(frameOf(timeOf(f, fps), fps)).toBe(f);
    expect(frameOf(1 / 25 - 1e-6, 25)).toBe(1);
  });
});
