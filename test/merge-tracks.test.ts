import { describe, expect, it } from "vitest";
import { mergeTracks, sameObject } from "../server/pipeline/merge-tracks";
import { mergeDetections } from "../server/pipeline/video";
import type { Track } from "../server/tracking";
import type { DetectionsFile } from "../server/pipeline/state";

/** A track moving right by `dx` px a frame from `x` over frames [from, to]. */
function track(id: number, type: Track["type"], from: number, to: number, x: number, extra: Partial<Track> = {}, dx = 2): Track {
  const box = (f: number) => ({ x: x + (f - from) * dx, y: 100, width: 60, height: 60 });
  return {
    id,
    type,
    firstFrame: from,
    lastFrame: to,
    keyframes: [
      { frame: from, box: box(from), score: 0.9, source: "detected" },
      { frame: to, box: box(to), score: 0.9, source: "detected" },
    ],
    ...extra,
  };
}

const faces = new Set(["face"] as const);

describe("re-detection keeps a reviewer's work", () => {
  it("replaces untouched tracks of the re-detected types and keeps other types", () => {
    const prev = [track(1, "face", 0, 50, 10), track(2, "licensePlate", 0, 50, 300)];
    const out = mergeTracks(prev, faces, [track(1, "face", 0, 50, 12)]);
    expect(out.map((t) => [t.id, t.type])).toEqual([
      [2, "licensePlate"],
      [3, "face"],
    ]);
  });

  it("keeps drawn tracks and tracks with manual keyframes, beside the new detections", () => {
    const drawn = track(4, "face", 10, 40, 500, { manual: true });
    const moved = track(5, "face", 0, 50, 10);
    moved.keyframes.splice(1, 0, { frame: 25, box: { x: 70, y: 100, width: 60, height: 60 }, score: null, source: "manual" });
    const out = mergeTracks([drawn, moved, track(6, "face", 0, 50, 900)], faces, [track(1, "face", 0, 50, 10)]);
    expect(out.map((t) => t.id).sort()).toEqual([4, 5, 7]);
    expect(out.find((t) => t.id === 7)!.enabled).toBeUndefined(); // a new box over a moved one stays on
  });

  it("carries a switched-off decision to the new track of the same object", () => {
    const off = track(3, "face", 0, 50, 10, { enabled: false, label: "officer" });
    const other = track(1, "face", 0, 50, 600);
    const out = mergeTracks([off], faces, [track(1, "face", 2, 52, 14), other]);
    const same = out.find((t) => t.firstFrame === 2)!;
    expect(same).toMatchObject({ enabled: false, label: "officer" });
    expect(out.find((t) => t.id === 3)).toBeUndefined(); // superseded: only detected keyframes
    expect(out.find((t) => t.keyframes[0]!.box.x === 600)!.enabled).toBeUndefined();
  });

  it("keeps a switched-off track no new track matches, and one with manual edits next to its successor", () => {
    const lonely = track(3, "face", 100, 150, 10, { enabled: false });
    const edited = track(4, "face", 0, 50, 300, { enabled: false });
    edited.keyframes[0]!.source = "manual";
    const out = mergeTracks([lonely, edited], faces, [track(1, "face", 0, 50, 300)]);
    expect(out.map((t) => t.id).sort()).toEqual([3, 4, 5]);
    expect(out.find((t) => t.id === 5)!.enabled).toBe(false);
  });

  it("tells objects apart by type, overlap in time and in space", () => {
    const a = track(1, "face", 0, 100, 10);
    expect(sameObject(a, track(2, "face", 5, 95, 14))).toBe(true);
    expect(sameObject(a, track(2, "head", 5, 95, 14))).toBe(false);
    expect(sameObject(a, track(2, "face", 90, 190, 190))).toBe(false); // shares 11 of 101 frames
    expect(sameObject(a, track(2, "face", 0, 100, 200))).toBe(false); // beside it
    expect(sameObject(a, track(2, "face", 0, 100, 10, {}, -2))).toBe(false); // crosses it going the other way
  });

  it("mergeDetections records the features and detectors and keeps ids unique", () => {
    const prev: DetectionsFile = {
      schema: "obscura.detections/v1", sessionId: "s", features: ["LICENSE_PLATE_DETECTION"], detectors: ["plates"], missingFeatures: [],
      profile: null, fps: 25, frameCount: 200, width: 640, height: 360,
      tracks: [track(9, "licensePlate", 0, 10, 0), track(2, "face", 0, 10, 0, { manual: true })],
    };
    const out = mergeDetections(prev, ["FACE_DETECTION"], {
      tracks: [track(1, "face", 0, 10, 300), track(2, "face", 0, 10, 400)], detectors: ["faces"], missingFeatures: [], profile: "gen6_standard",
    } as never);
    expect(out.features).toEqual(["LICENSE_PLATE_DETECTION", "FACE_DETECTION"]);
    expect(out.detectors).toEqual(["plates", "faces"]);
    const ids = out.tracks.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([9, 2, 10, 11]);
  });
});
