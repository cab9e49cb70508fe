/** server/tracking: Kalman filter, assignment, ByteTrack-style tracker, keyframes, profiles. */
import { describe, expect, it } from "vitest";
import type { Box } from "@/lib/geometry";
import type { Detection, ObjectType } from "@/server/vision/types";
import {
  BoxKalman,
  STD_WEIGHT_POSITION,
  STD_WEIGHT_VELOCITY,
} from "@/server/tracking/kalman";
import {
  Tracker,
  boxAt,
  expandTracks,
  hungarian,
  matchBySimilarity,
  iouMatrix,
  bufferedIou,
  trackerParams,
  trackingProfile,
  detectorThreshold,
  PROFILE_SPECS,
  type Track,
  type TrackerParams,
} from "@/server/tracking";

// ---------------------------------------------------------------------------------------------
// helpers

const box = (x: number, y: number, width: number, height: number): Box => ({ x, y, width, height });
const det = (type: ObjectType, b: Box, score = 0.9, label?: string): Detection => (label ? { type, score, box: b, label } : { type, score, box: b });

/** Largest absolute coordinate difference between two boxes. */
const boxError = (a: Box, b: Box) => Math.max(Math.abs(a.x - b.x), Math.abs(a.y - b.y), Math.abs(a.width - b.width), Math.abs(a.height - b.height));

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASE: TrackerParams = {
  highThreshold: 0.5,
  newTrackThreshold: 0.5,
  lowThreshold: 0.1,
  stage1Iou: 0.2,
  stage2Iou: 0.5,
  iouBuffer: 0.1,
  maxMissedFrames: 30,
  tailFrames: 6,
  headFrames: 2,
};

// ---------------------------------------------------------------------------------------------
// Kalman

/** The textbook 8x8 filter, written with plain matrices, to check the per-axis form against. */
class Reference8 {
  x: number[];
  P: number[][];
  constructor(b: Box) {
    const z = [b.x + b.width / 2, b.y + b.height / 2, b.width, b.height];
    this.x = [...z, 0, 0, 0, 0];
    const s = [z[2]!, z[3]!, z[2]!, z[3]!];
    const std = [...s.map((v) => 2 * STD_WEIGHT_POSITION * v), ...s.map((v) => 10 * STD_WEIGHT_VELOCITY * v)];
    this.P = diag(std.map((v) => v * v));
  }
  predict() {
    const F = eye(8);
    for (let i = 0; i < 4; i++) F[i]![i + 4] = 1;
    const s = [this.x[2]!, this.x[3]!, this.x[2]!, this.x[3]!];
    const Q = diag([...s.map((v) => (STD_WEIGHT_POSITION * v) ** 2), ...s.map((v) => (STD_WEIGHT_VELOCITY * v) ** 2)]);
    this.x = mulVec(F, this.x);
    this.P = add(mul(mul(F, this.P), transpose(F)), Q);
  }
  update(b: Box) {
    const z = [b.x + b.width / 2, b.y + b.height / 2, b.width, b.height];
    const H = zeros(4, 8);
    for (let i = 0; i < 4; i++) H[i]![i] = 1;
    const s = [this.x[2]!, this.x[3]!, this.x[2]!, this.x[3]!];
    const R = diag(s.map((v) => (STD_WEIGHT_POSITION * v) ** 2));
    const S = add(mul(mul(H, this.P), transpose(H)), R);
    const K = mul(mul(this.P, transpose(H)), inverse(S));
    const hx = mulVec(H, this.x);
    const y = z.map((v, i) => v - hx[i]!);
    const ky = mulVec(K, y);
    this.x = this.x.map((v, i) => v + ky[i]!);
    this.P = mul(add(eye(8), scale(mul(K, H), -1)), this.P);
  }
}
function zeros(r: number, c: number) {
  return Array.from({ length: r }, () => new Array<number>(c).fill(0));
}
function eye(n: number) {
  const m = zeros(n, n);
  for (let i = 0; i < n; i++) m[i]![i] = 1;
  return m;
}
function diag(v: number[]) {
  const m = zeros(v.length, v.length);
  v.forEach((x, i) => (m[i]![i] = x));
  return m;
}
function mul(a: number[][], b: number[][]) {
  const m = zeros(a.length, b[0]!.length);
  for (let i = 0; i < a.length; i++) for (let j = 0; j < b[0]!.length; j++) for (let k = 0; k < b.length; k++) m[i]![j]! += a[i]![k]! * b[k]![j]!;
  return m;
}
function mulVec(a: number[][], v: number[]) {
  return a.map((row) => row.reduce((s, x, k) => s + x * v[k]!, 0));
}
function add(a: number[][], b: number[][]) {
  return a.map((row, i) => row.map((x, j) => x + b[i]![j]!));
}
function scale(a: number[][], f: number) {
  return a.map((row) => row.map((x) => x * f));
}
function transpose(a: number[][]) {
  return a[0]!.map((_, j) => a.map((row) => row[j]!));
}
function inverse(a: number[][]) {
  // Gauss-Jordan with partial pivoting.
  const n = a.length;
  const m = a.map((row, i) => [...row, ...eye(n)[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r;
    [m[c], m[p]] = [m[p]!, m[c]!];
    const d = m[c]![c]!;
    for (let j = 0; j < 2 * n; j++) m[c]![j]! /= d;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]!;
      for (let j = 0; j < 2 * n; j++) m[r]![j]! -= f * m[c]![j]!;
    }
  }
  return m.map((row) => row.slice(n));
}

describe("BoxKalman", () => {
  const truth = (f: number) => box(100 + 4 * f - (40 + 0.5 * f) / 2, 200 - 2 * f - (50 + 0.25 * f) / 2, 40 + 0.5 * f, 50 + 0.25 * f);

  it("predicts constant motion exactly after a few updates", () => {
    const kf = new BoxKalman(truth(0));
    const errAfter: Record<number, number> = {};
    for (let f = 1; f <= 60; f++) {
      kf.predict();
      kf.update(truth(f));
      if (f === 20 || f === 60) {
        const ahead = new BoxKalman(truth(0));
        ahead.mean.set(kf.mean);
        ahead.cov.set(kf.cov);
        ahead.predict(10);
        errAfter[f] = boxError(ahead.box(), truth(f + 10));
      }
    }
    // Velocity starts at 0 and converges exponentially: within a pixel 10 frames ahead after 20
    // updates, and to a hundredth of a pixel after 60.
    expect(errAfter[20]).toBeLessThan(1);
    expect(errAfter[60]).toBeLessThan(0.01);
    const [vx, vy, vw, vh] = kf.velocity();
    expect(vx).toBeCloseTo(4, 2);
    expect(vy).toBeCloseTo(-2, 2);
    expect(vw).toBeCloseTo(0.5, 2);
    expect(vh).toBeCloseTo(0.25, 2);
  });

  it("multi-step predict equals repeated single steps", () => {
    const a = new BoxKalman(truth(0));
    const b = new BoxKalman(truth(0));
    a.update(truth(0));
    b.update(truth(0));
    a.predict(3);
    b.predict();
    b.predict();
    b.predict();
    expect([...a.mean]).toEqual([...b.mean]);
    expect([...a.cov]).toEqual([...b.cov]);
  });

  it("matches the plain 8x8 matrix filter", () => {
    const random = rng(7);
    const kf = new BoxKalman(truth(0));
    const ref = new Reference8(truth(0));
    for (let f = 1; f <= 25; f++) {
      const steps = 1 + Math.floor(random() * 3);
      kf.predict(steps);
      for (let s = 0; s < steps; s++) ref.predict();
      const t = truth(f * 2);
      const noisy = box(t.x + random() * 4 - 2, t.y + random() * 4 - 2, t.width + random() * 2 - 1, t.height + random() * 2 - 1);
      kf.update(noisy);
      ref.update(noisy);
      for (let i = 0; i < 8; i++) expect(kf.mean[i]).toBeCloseTo(ref.x[i]!, 8);
      const P = kf.covariance8();
      for (let i = 0; i < 8; i++) for (let j = 0; j < 8; j++) expect(P[i * 8 + j]).toBeCloseTo(ref.P[i]![j]!, 6);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// assignment

describe("assignment", () => {
  function bruteForceMin(cost: number[][]): number {
    const n = cost.length;
    const m = cost[0]!.length;
    let best = Infinity;
    const used = new Array<boolean>(m).fill(false);
    const go = (r: number, acc: number) => {
      if (r === n) {
        best = Math.min(best, acc);
        return;
      }
      for (let c = 0; c < m; c++) {
        if (used[c]) continue;
        used[c] = true;
        go(r + 1, acc + cost[r]![c]!);
        used[c] = false;
      }
    };
    go(0, 0);
    return best;
  }

  it("hungarian finds the minimum-cost assignment (checked by brute force)", () => {
    const random = rng(3);
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + Math.floor(random() * 5);
      const m = n + Math.floor(random() * 3);
      const cost = Array.from({ length: n }, () => Array.from({ length: m }, () => Math.round(random() * 100)));
      const sol = hungarian(cost.flat(), n, m);
      expect(new Set(sol).size).toBe(n);
      const total = [...sol].reduce((s, c, r) => s + cost[r]![c]!, 0);
      expect(total).toBe(bruteForceMin(cost));
      // The transposed (rows > cols) case gives the same optimum.
      const t = transpose(cost);
      const solT = hungarian(t.flat(), m, n);
      const totalT = [...solT].reduce((s, c, r) => (c >= 0 ? s + t[r]![c]! : s), 0);
      expect(totalT).toBe(total);
    }
  });

  it("matchBySimilarity maximises total similarity above the threshold, where greedy would not", () => {
    // Greedy takes (0,0)=0.9 first and leaves row 1 with nothing; the optimum pairs (0,1) and (1,0).
    const sim = [0.9, 0.8, 0.85, 0.0];
    const m = matchBySimilarity(sim, 2, 2, 0.3);
    expect(m.pairs).toEqual([
      [0, 1],
      [1, 0],
    ]);
    // A pair below the threshold is never made, and leaving a row unmatched beats a poor second pair
    // (ByteTrack's cost_limit behaviour): 0.9 alone beats 0.35 + 0.35.
    const sim2 = [0.9, 0.35, 0.35, 0.0];
    const m2 = matchBySimilarity(sim2, 2, 2, 0.3);
    expect(m2.pairs).toEqual([[0, 0]]);
    expect(m2.unmatchedRows).toEqual([1]);
    expect(m2.unmatchedCols).toEqual([1]);
    expect(matchBySimilarity([], 0, 3, 0.2)).toEqual({ pairs: [], unmatchedRows: [], unmatchedCols: [0, 1, 2] });
  });

  it("iouMatrix equals pairwise (buffered) IoU", () => {
    const random = rng(5);
    const boxes = (n: number) => Array.from({ length: n }, () => box(random() * 300, random() * 300, 5 + random() * 80, 5 + random() * 80));
    for (const buffer of [0, 0.1, 0.3]) {
      const a = boxes(40);
      const b = boxes(35);
      const m = iouMatrix(a, b, buffer);
      let nonZero = 0;
      for (let r = 0; r < a.length; r++) {
        for (let c = 0; c < b.length; c++) {
          expect(m[r * b.length + c]).toBeCloseTo(bufferedIou(a[r]!, b[c]!, buffer), 12);
          if (m[r * b.length + c]! > 0) nonZero++;
        }
      }
      expect(nonZero).toBeGreaterThan(50);
    }
    expect(bufferedIou(box(0, 0, 10, 10), box(12, 0, 10, 10), 0)).toBe(0);
    expect(bufferedIou(box(0, 0, 10, 10), box(12, 0, 10, 10), 0.2)).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------
// tracker

/** Runs a tracker over frames 0..lastFrame step `stride`, detections from `detect(frame)`. */
function run(params: TrackerParams, lastFrame: number, stride: number, detect: (f: number) => Detection[], frameCount = lastFrame + 1) {
  const tracker = new Tracker(params);
  const states = new Map<number, ReturnType<Tracker["update"]>>();
  for (let f = 0; f <= lastFrame; f += stride) states.set(f, tracker.update(f, detect(f)));
  return { states, tracks: tracker.finish({ frameCount }) };
}

describe("Tracker", () => {
  it("a box moving at constant speed, detected every 3rd frame, is one track with a box on every frame", () => {
    const truth = (f: number) => box(20 + 5 * f, 300 - 2 * f, 40 + 0.1 * f, 48 + 0.1 * f);
    const jitter = rng(11);
    const noisy = (b: Box) => box(b.x + jitter() - 0.5, b.y + jitter() - 0.5, b.width + jitter() - 0.5, b.height + jitter() - 0.5);
    const frameCount = 100;
    const lastDetected = 90;
    const { states, tracks } = run(BASE, 99, 3, (f) => (f <= lastDetected ? [det("face", noisy(truth(f)))] : []), frameCount);

    for (const [f, s] of states) {
      if (f <= lastDetected) {
        expect(s.map((t) => t.id)).toEqual([1]);
        expect(s[0]!.predicted).toBe(false);
      } else {
        // After the object leaves: still reported, predicted, for maxMissedFrames.
        expect(s).toHaveLength(1);
        expect(s[0]!.predicted).toBe(true);
        expect(s[0]!.score).toBeNull();
      }
    }
    expect(tracks).toHaveLength(1);
    const t = tracks[0]!;
    expect(t.type).toBe("face");
    // Head: 2 frames before the first detection, clamped at 0. Tail: last detection + tailFrames.
    expect(t.firstFrame).toBe(0);
    expect(t.lastFrame).toBe(lastDetected + BASE.tailFrames);
    expect(t.keyframes.filter((k) => k.source === "detected")).toHaveLength(lastDetected / 3 + 1);
    expect(t.keyframes.filter((k) => k.source === "predicted").map((k) => k.frame)).toEqual([lastDetected + BASE.tailFrames]);

    const perFrame = expandTracks(tracks, frameCount);
    let worst = 0;
    for (let f = 0; f <= t.lastFrame; f++) {
      expect(perFrame[f]).toHaveLength(1);
      worst = Math.max(worst, boxError(perFrame[f]![0]!.box, truth(f)));
    }
    // Interpolated (and the tail extrapolated) within a couple of pixels of the truth, given the ±0.5 px jitter.
    expect(worst).toBeLessThan(2);
    for (let f = t.lastFrame + 1; f < frameCount; f++) expect(perFrame[f]).toEqual([]);
  });

  it("two crossing objects keep their ids", () => {
    // A goes right, B goes left, 10 px apart vertically; their boxes overlap almost fully at frame 45.
    const A = (f: number) => box(50 + 6 * f, 100, 40, 40);
    const B = (f: number) => box(590 - 6 * f, 110, 40, 40);
    for (const occlude of [false, true]) {
      // With `occlude`, B is hidden behind A (not detected) on the detection frames around the crossing.
      const { tracks } = run(BASE, 90, 3, (f) => {
        const d = [det("face", A(f), 0.9)];
        if (!(occlude && f >= 39 && f <= 51)) d.push(det("face", B(f), 0.8));
        return d;
      });
      expect(tracks).toHaveLength(2);
      const [ta, tb] = tracks as [Track, Track];
      for (const k of ta.keyframes.filter((k) => k.source === "detected")) expect(boxError(k.box, A(k.frame))).toBeLessThan(1e-9);
      for (const k of tb.keyframes.filter((k) => k.source === "detected")) expect(boxError(k.box, B(k.frame))).toBeLessThan(1e-9);
      expect(ta.keyframes.filter((k) => k.source === "detected")).toHaveLength(31);
      expect(tb.keyframes.filter((k) => k.source === "detected")).toHaveLength(occlude ? 26 : 31);
      // Through the occlusion B's box is interpolated along its path.
      for (let f = 39; f <= 51; f++) expect(boxError(boxAt(tb, f)!, B(f))).toBeLessThan(1e-6);
    }
  });

  it("a track missed for a few detection frames is predicted, then re-associated with the same id", () => {
    const truth = (f: number) => box(100 + 4 * f, 200 + 1 * f, 50, 60);
    const missed = new Set([30, 33, 36, 39]);
    const { states, tracks } = run(BASE, 75, 3, (f) => (missed.has(f) ? [] : [det("face", truth(f))]));
    for (const f of missed) {
      const s = states.get(f)!;
      expect(s).toHaveLength(1);
      expect(s[0]!.id).toBe(1);
      expect(s[0]!.predicted).toBe(true);
      // The filter has learned the motion: the prediction follows the object.
      expect(boxError(s[0]!.box, truth(f))).toBeLessThan(4);
    }
    expect(states.get(42)![0]).toMatchObject({ id: 1, predicted: false, missedFrames: 0, hits: 11 });
    expect(tracks).toHaveLength(1);
    // Across the gap the stored track interpolates between frames 27 and 42: exact for linear motion.
    for (let f = 27; f <= 42; f++) expect(boxError(boxAt(tracks[0]!, f)!, truth(f))).toBeLessThan(1e-9);
    expect(tracks[0]!.keyframes.some((k) => k.frame > 27 && k.frame < 42)).toBe(false);
  });

  it("a lost track ends after maxMissedFrames and its stored track stops tailFrames after the last detection", () => {
    const params = { ...BASE, maxMissedFrames: 9 };
    const b = box(100, 100, 40, 40);
    const tracker = new Tracker(params);
    for (let f = 0; f <= 30; f += 3) tracker.update(f, [det("face", b)]);
    expect(tracker.update(39, [])).toHaveLength(1); // 9 frames missed: still alive
    expect(tracker.update(42, [])).toHaveLength(0); // 12: ended
    // Seen again at the same place: a new track.
    expect(tracker.update(45, [det("face", b)])[0]!.id).toBe(2);
    const [t1, t2] = tracker.finish({ frameCount: 48 });
    expect(t1!.lastFrame).toBe(30 + params.tailFrames);
    expect(t2!.firstFrame).toBe(45 - params.headFrames!);
    expect(t2!.lastFrame).toBe(47); // clamped to frameCount - 1
  });

  it("a false single-frame low-score detection does not create a track; low scores do continue a track", () => {
    const tracker = new Tracker(BASE);
    expect(tracker.update(0, [])).toEqual([]);
    expect(tracker.update(3, [det("face", box(10, 10, 30, 30), 0.3)])).toEqual([]);
    expect(tracker.update(6, [det("face", box(10, 10, 30, 30), 0.05)])).toEqual([]); // below low
    // A real face whose score drops below the high threshold (blur, turned head) stays tracked.
    const b = (f: number) => box(200 + f, 100, 40, 40);
    for (let f = 9; f <= 18; f += 3) tracker.update(f, [det("face", b(f), 0.9)]);
    for (let f = 21; f <= 30; f += 3) {
      const s = tracker.update(f, [det("face", b(f), 0.2)]);
      expect(s).toHaveLength(1);
      expect(s[0]).toMatchObject({ id: 1, predicted: false, score: 0.2 });
    }
    const tracks = tracker.finish();
    expect(tracks).toHaveLength(1);
    expect(tracks[0]!.keyframes.filter((k) => k.source === "detected")).toHaveLength(8);
  });

  it("never mixes object types", () => {
    const b = (f: number) => box(300 + 2 * f, 200, 60, 30);
    const tracker = new Tracker({ ...BASE, thresholdsByType: { licensePlate: { high: 0.6, newTrack: 0.6 } } });
    for (let f = 0; f <= 30; f += 3) {
      const s = tracker.update(f, [det("face", b(f), 0.9), det("licensePlate", b(f), 0.9, "plate")]);
      expect(s.map((t) => [t.id, t.type, t.predicted])).toEqual([
        [1, "face", false],
        [2, "licensePlate", false],
      ]);
    }
    // The face goes; a plate detection sits right on the face's predicted box: only the plate track takes it.
    for (let f = 33; f <= 45; f += 3) {
      const s = tracker.update(f, [det("licensePlate", b(f), 0.9)]);
      expect(s.find((t) => t.type === "face")!.predicted).toBe(true);
      expect(s.find((t) => t.type === "licensePlate")!.predicted).toBe(false);
    }
    // A plate alone, where no plate track is, starts a plate track, never joins the face track.
    const s = tracker.update(48, [det("face", box(900, 500, 40, 40), 0.9), det("licensePlate", b(48), 0.9), det("licensePlate", box(10, 10, 50, 20), 0.9)]);
    expect(s.filter((t) => t.type === "licensePlate").map((t) => t.id)).toEqual([2, 4]);
    expect(s.find((t) => t.id === 1)!.predicted).toBe(true);
    // A plate below the plate threshold (but above the face one) does not start a track.
    expect(tracker.update(51, [det("licensePlate", box(700, 10, 50, 20), 0.55)]).some((t) => t.id === 5)).toBe(false);
    const tracks = tracker.finish();
    for (const t of tracks) expect(["face", "licensePlate"]).toContain(t.type);
    expect(tracks.find((t) => t.id === 2)!.label).toBe("plate");
    expect(tracks.find((t) => t.id === 1)!.keyframes.filter((k) => k.source === "detected").at(-1)!.frame).toBe(30);
  });

  it("rejects frames that do not increase", () => {
    const tracker = new Tracker(BASE);
    tracker.update(5, []);
    expect(() => tracker.update(5, [])).toThrow(RangeError);
    expect(() => tracker.update(4, [])).toThrow(RangeError);
    expect(() => tracker.update(6.5, [])).toThrow(RangeError);
  });
});

// ---------------------------------------------------------------------------------------------
// keyframes

describe("boxAt", () => {
  const track: Track = {
    id: 1,
    type: "face",
    firstFrame: 0,
    lastFrame: 20,
    keyframes: [
      { frame: 0, box: box(0, 0, 10, 10), score: 0.9, source: "detected" },
      { frame: 10, box: box(100, 50, 20, 30), score: 0.8, source: "detected" },
      { frame: 20, box: box(100, 150, 20, 30), score: null, source: "predicted" },
    ],
  };
  it("interpolates linearly between keyframes, exactly", () => {
    expect(boxAt(track, 0)).toEqual(box(0, 0, 10, 10));
    expect(boxAt(track, 5)).toEqual(box(50, 25, 15, 20));
    expect(boxAt(track, 10)).toEqual(box(100, 50, 20, 30));
    expect(boxAt(track, 12)).toEqual(box(100, 70, 20, 30));
    expect(boxAt(track, 20)).toEqual(box(100, 150, 20, 30));
  });
  it("is null outside the track", () => {
    expect(boxAt(track, -1)).toBeNull();
    expect(boxAt(track, 21)).toBeNull();
  });
  it("expandTracks gives the same boxes", () => {
    const frames = expandTracks([track], 25);
    expect(frames).toHaveLength(25);
    for (let f = 0; f < 25; f++) {
      const b = boxAt(track, f);
      expect(frames[f]).toEqual(b ? [{ trackId: 1, type: "face", box: b }] : []);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// profiles

describe("trackingProfile", () => {
  it("gives the documented numbers at 30 fps", () => {
    const pick = (name: string) => {
      const p = trackingProfile(name, 30);
      return [p.detectionStride, p.stage1Iou, p.stage2Iou, p.iouBuffer, p.maxMissedFrames, p.tailFrames, p.headFrames, p.lowScoreFactor, p.newTrackScoreFactor];
    };
    expect(pick("gen6_standard")).toEqual([3, 0.2, 0.5, 0.1, 30, 6, 2, 0.5, 1]);
    expect(pick("gen6_highMotion")).toEqual([1, 0.1, 0.3, 0.3, 15, 6, 0, 0.4, 1]);
    expect(pick("gen6_conference")).toEqual([5, 0.3, 0.5, 0, 60, 15, 4, 0.5, 1]);
    expect(pick("gen5_standard")).toEqual(pick("gen6_standard"));
    expect(pick("gen5_highMotion")).toEqual(pick("gen6_highMotion"));
    expect(trackingProfile("gen5_standard", 30).generation).toBe(5);
    expect(Object.keys(PROFILE_SPECS).sort()).toEqual(["gen5_highMotion", "gen5_standard", "gen6_conference", "gen6_highMotion", "gen6_standard"]);
  });
  it("scales with fps as the table says", () => {
    const strides = (fps: number) => ["gen6_standard", "gen6_highMotion", "gen6_conference"].map((n) => trackingProfile(n, fps).detectionStride);
    expect(strides(25)).toEqual([3, 1, 4]);
    expect(strides(29.97)).toEqual([3, 1, 5]);
    expect(strides(60)).toEqual([6, 2, 10]);
    expect(trackingProfile("gen6_standard", 60).maxMissedFrames).toBe(60);
    expect(trackingProfile("gen6_standard", 60).tailFrames).toBe(12);
    // Very low frame rates: never below one frame, tail never below the stride.
    const slow = trackingProfile("gen6_conference", 2);
    expect([slow.detectionStride, slow.maxMissedFrames, slow.tailFrames]).toEqual([1, 4, 1]);
    expect(() => trackingProfile("gen7_standard", 30)).toThrow(RangeError);
    expect(() => trackingProfile("gen6_standard", 0)).toThrow(RangeError);
  });
  it("derives score thresholds from the request's thresholds per type", () => {
    const p = trackingProfile("gen6_standard", 30);
    const params = trackerParams(p, { objects: 0.3, inner: 0.15 });
    const t = new Tracker(params);
    expect(t.thresholds("face")).toEqual({ high: 0.15, newTrack: 0.15, low: 0.075 });
    expect(t.thresholds("licensePlate")).toEqual({ high: 0.15, newTrack: 0.15, low: 0.075 });
    expect(t.thresholds("person")).toEqual({ high: 0.3, newTrack: 0.3, low: 0.15 });
    expect(t.thresholds("vehicle")).toEqual({ high: 0.3, newTrack: 0.3, low: 0.15 });
    expect(detectorThreshold(trackingProfile("gen6_highMotion", 30), 0.15)).toBeCloseTo(0.06, 10);
    expect(detectorThreshold(p, 0.06)).toBe(0.05); // floor
    expect(detectorThreshold(p, 0.03)).toBe(0.03); // never above the request's own threshold
  });
});

// ---------------------------------------------------------------------------------------------
// throughput (printed, not asserted)

describe("throughput", () => {
  it("1000 frames x 50 objects", () => {
    const random = rng(42);
    const N = 50;
    const objs = Array.from({ length: N }, (_, i) => ({
      x: random() * 1800,
      y: random() * 1000,
      vx: random() * 6 - 3,
      vy: random() * 4 - 2,
      s: 20 + random() * 60,
      type: (i % 5 === 0 ? "licensePlate" : "face") as ObjectType,
    }));
    const frames: Detection[][] = [];
    for (let f = 0; f < 1000; f++) {
      const d: Detection[] = [];
      for (const o of objs) {
        o.x += o.vx + random() - 0.5;
        o.y += o.vy + random() - 0.5;
        if (o.x < 0 || o.x > 1800) o.vx = -o.vx;
        if (o.y < 0 || o.y > 1000) o.vy = -o.vy;
        const r = random();
        if (r < 0.05) continue; // missed
        d.push(det(o.type, box(o.x, o.y, o.s, o.s * 1.2), r < 0.15 ? 0.2 : 0.5 + random() * 0.5));
      }
      if (random() < 0.3) d.push(det("face", box(random() * 1800, random() * 1000, 30, 30), 0.2)); // low-score noise
      frames.push(d);
    }
    const params = trackerParams(trackingProfile("gen6_highMotion", 30), { objects: 0.3, inner: 0.3 });
    let tracks: Track[] = [];
    // Run 1 includes the JIT warming up; run 2 is the steady state of a long video.
    for (const run of [1, 2]) {
      const tracker = new Tracker(params);
      const t0 = performance.now();
      for (let f = 0; f < frames.length; f++) tracker.update(f, frames[f]!);
      const t1 = performance.now();
      tracks = tracker.finish({ frameCount: 1000 });
      const t2 = performance.now();
      const perFrame = expandTracks(tracks, 1000);
      const t3 = performance.now();
      const keyframes = tracks.reduce((s, t) => s + t.keyframes.length, 0);
      console.log(
        `[tracking throughput, run ${run}] 1000 frames x ${N} objects: update ${(t1 - t0).toFixed(0)} ms (${((t1 - t0) / 1000).toFixed(3)} ms/frame), ` +
          `finish ${(t2 - t1).toFixed(1)} ms, expandTracks ${(t3 - t2).toFixed(1)} ms; ${tracks.length} tracks, ${keyframes} keyframes, ` +
          `${perFrame.reduce((s, b) => s + b.length, 0)} per-frame boxes`,
      );
    }
    expect(tracks.length).toBeGreaterThanOrEqual(N);
  });
});
