/**
 * The leak check (server/pipeline/leak-check.ts): coverage and grouping as pure functions, then
 * real renders of a face clip (the face-api sample photo, three faces) scanned again: a complete
 * track set leaves no leak, a disabled or cut-short track leaves one at its face with the right
 * times, the detector's weak false face at the default threshold is dismissed by FaceMesh, OUTLINE
 * redacts nothing, and the switches turn it off.
 */
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { coverage, iou, type Box } from "@/lib/geometry";
import { probe, runFfmpeg, type MediaInfo } from "@/server/media";
import { renderVideo, type VideoRenderConfig } from "@/server/render";
import { boxAt, type Track } from "@/server/tracking";
import { detectVideo } from "@/server/vision/video";
import {
  checkVideoLeaks,
  groupLeaks,
  leakCheckEnabled,
  leakFeatures,
  leakSummary,
  leakThresholds,
  unionCoverage,
  type LeakHit,
} from "@/server/pipeline/leak-check";
import { tempDir } from "./helpers/server";
import { RENDER_DEFAULTS } from "@/lib/api/video";

const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");

describe("leak check: pure parts", () => {
  it("measures the union of redacted boxes exactly", () => {
    const t: Box = { x: 0, y: 0, width: 10, height: 10 };
    expect(unionCoverage(t, [])).toBe(0);
    expect(unionCoverage(t, [{ x: 5, y: 0, width: 10, height: 10 }])).toBeCloseTo(0.5);
    // two overlapping halves: the overlap counts once
    expect(unionCoverage(t, [{ x: 0, y: 0, width: 6, height: 10 }, { x: 4, y: 0, width: 6, height: 10 }])).toBeCloseTo(1);
    expect(unionCoverage(t, [{ x: 0, y: 0, width: 5, height: 5 }, { x: 5, y: 5, width: 5, height: 5 }])).toBeCloseTo(0.5);
  });

  it("halves the request's thresholds, never below the noise floor, and reports from the request's", () => {
    expect(leakThresholds({ objectsConfidenceThreshold: 0.3, innerObjectsConfidenceThreshold: 0.15 })).toEqual({
      seen: { objects: 0.15, inner: 0.1 },
      report: { objects: 0.3, inner: 0.15 },
    });
    expect(leakThresholds({ objectsConfidenceThreshold: 0.05, innerObjectsConfidenceThreshold: 0.6 }).seen).toEqual({ objects: 0.05, inner: 0.3 });
  });

  it("groups hits of one place on successive scanned frames, drops weak groups", () => {
    const b = (x: number): Box => ({ x, y: 10, width: 40, height: 40 });
    const hit = (frame: number, x: number, score: number): LeakHit => ({ frame, type: "face", box: b(x), score, coverage: 0 });
    const hits = [
      hit(0, 100, 0.2), hit(3, 102, 0.9), hit(6, 104, 0.3), /* frame 9 missed */ hit(12, 106, 0.25),
      hit(0, 400, 0.12), hit(3, 401, 0.11), // never reaches 0.15: not reported
      hit(30, 100, 0.5), // too long after frame 12: a new leak
    ];
    const { leaks, dismissed } = groupLeaks(hits, { stride: 3, fps: 25, report: { objects: 0.3, inner: 0.15 } });
    expect(leaks).toHaveLength(2);
    expect(dismissed).toEqual([]);
    expect(leaks[0]).toMatchObject({ id: 1, type: "face", firstFrame: 0, lastFrame: 12, firstTime: 0, lastTime: 0.48, frame: 3, time: 0.12, score: 0.9, hits: 4 });
    expect(leaks[0]!.box).toEqual(b(102));
    expect(leaks[1]).toMatchObject({ id: 2, firstFrame: 30, lastFrame: 30, hits: 1 });
  });

  it("dismisses weak faces FaceMesh saw no face in, never strong or unjudged ones", () => {
    const b = (x: number): Box => ({ x, y: 10, width: 40, height: 40 });
    const hit = (frame: number, x: number, score: number, faceCheck?: number): LeakHit => ({ frame, type: "face", box: b(x), score, coverage: 0, ...(faceCheck !== undefined ? { faceCheck } : {}) });
    const hits = [
      hit(0, 100, 0.2, 0.01), hit(3, 100, 0.3, 0.02), // weak, no face: dismissed
      hit(0, 300, 0.2, 0.01), hit(3, 300, 0.25, 0.9), // FaceMesh saw a face once: a leak
      hit(0, 500, 0.3), // too small to judge (no faceCheck): a leak
      hit(0, 700, 0.2, 0.0), hit(3, 700, 0.2), // one hit unjudged: a leak
      hit(0, 900, 0.8, 0.0), // strong: a leak whatever FaceMesh says
    ];
    const { leaks, dismissed } = groupLeaks(hits, { stride: 3, fps: 25, report: { objects: 0.3, inner: 0.15 } });
    expect(dismissed.map((l) => [l.box.x, l.faceCheck])).toEqual([[100, 0.02]]);
    expect(leaks.map((l) => [l.box.x, l.faceCheck])).toEqual([[300, 0.9], [500, undefined], [700, 0], [900, 0]]);
  });

  describe("switches", () => {
    const saved = process.env.OBSCURA_LEAK_CHECK;
    afterEach(() => {
      if (saved === undefined) delete process.env.OBSCURA_LEAK_CHECK;
      else process.env.OBSCURA_LEAK_CHECK = saved;
    });
    it("renderConfig.leakCheck and OBSCURA_LEAK_CHECK", () => {
      delete process.env.OBSCURA_LEAK_CHECK;
      expect(leakCheckEnabled(undefined)).toBe(true);
      expect(leakCheckEnabled(true)).toBe(true);
      expect(leakCheckEnabled(false)).toBe(false);
      for (const off of ["0", "false", "off", "NO"]) {
        process.env.OBSCURA_LEAK_CHECK = off;
        expect(leakCheckEnabled(true)).toBe(false);
      }
      process.env.OBSCURA_LEAK_CHECK = "1";
      expect(leakCheckEnabled(undefined)).toBe(true);
    });
    it("scans for the request's detection features, else the session's", () => {
      expect(leakFeatures(["FACE_DETECTION", "MEDIA_RENDER"], ["LICENSE_PLATE_DETECTION"])).toEqual(["FACE_DETECTION"]);
      expect(leakFeatures(["MEDIA_RENDER"], ["LICENSE_PLATE_DETECTION", "FACE_DETECTION"])).toEqual(["LICENSE_PLATE_DETECTION", "FACE_DETECTION"]);
      expect(leakFeatures(["MEDIA_RENDER"], [])).toEqual([]);
    });
  });
});

describe("leak check on rendered video", () => {
  let dir: string;
  let clip: string;
  let info: MediaInfo;
  let faces: Track[];
  const FPS = 25;
  const FRAMES = 75; // 3 s
  // The request's face threshold for this clip. At the default 0.15 the face detector also finds a
  // patch of dark background left of the first person (scores 0.15-0.29 on the re-encoded
  // output): a possible leak by the detector's own standard. The three faces score ~0.99.
  const settings = { objectsConfidenceThreshold: 0.3, innerObjectsConfidenceThreshold: 0.5, faceBoxExpansionFactor: 1.5, profileName: "gen6_standard" };
  const config: VideoRenderConfig = { ...RENDER_DEFAULTS, maskAudioParams: [...RENDER_DEFAULTS.maskAudioParams], exportHashes: [] };

  const renderAndCheck = async (name: string, tracks: Track[], style: Partial<VideoRenderConfig> = {}) => {
    const out = path.join(dir, name);
    await renderVideo(clip, out, { info, tracks, config: { ...config, ...style } });
    const progress: number[] = [];
    const report = await checkVideoLeaks(out, {
      tracks,
      boxSpace: { width: info.video.displayWidth, height: info.video.displayHeight },
      fps: info.video.fps,
      style: { ...config, ...style },
      features: ["FACE_DETECTION"],
      settings,
      onProgress: (x) => progress.push(x),
    });
    return { report, progress };
  };

  beforeAll(async () => {
    dir = tempDir("leaks");
    clip = path.join(dir, "faces.mp4");
    await runFfmpeg([
      "-loop", "1", "-framerate", String(FPS), "-i", SAMPLE, "-t", "3", "-vf", "scale=640:-2,crop=640:360:0:20",
      "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip,
    ]);
    info = await probe(clip);
    expect(info.video.frameCount).toBe(FRAMES);
    const detected = await detectVideo(clip, info, ["FACE_DETECTION"], settings);
    faces = detected.tracks.filter((t) => t.type === "face");
    expect(faces).toHaveLength(3);
    for (const t of faces) expect([t.firstFrame, t.lastFrame]).toEqual([0, FRAMES - 1]);
  });

  it("a complete track set leaves no leak; progress moves; the report says what ran", async () => {
    const { report, progress } = await renderAndCheck("all.mp4", faces);
    expect(report.leaks).toEqual([]);
    expect(report).toMatchObject({
      schema: "obscura.leaks/v1",
      features: ["FACE_DETECTION"],
      detectionStride: 3,
      framesScanned: 25,
      width: 640,
      height: 360,
      threshold: { seen: { inner: 0.25 }, report: { inner: 0.5 } },
    });
    expect(progress.length).toBe(26); // one per scanned frame, then 1
    expect(progress.at(-1)).toBe(1);
    expect(progress.every((p, i) => i === 0 || p >= progress[i - 1]!)).toBe(true);
  });

  it("a disabled track is a leak at its face for the whole clip", async () => {
    const off = faces[1]!;
    const { report } = await renderAndCheck("one-off.mp4", faces.map((t) => (t === off ? { ...t, enabled: false } : t)));
    expect(report.leaks).toHaveLength(1);
    const leak = report.leaks[0]!;
    expect(leak).toMatchObject({ type: "face", firstFrame: 0, firstTime: 0, lastFrame: 72, lastTime: 2.88, hits: 25 });
    expect(leak.score).toBeGreaterThan(0.9);
    expect(leak.coverage).toBe(0);
    // the leak's tight face box lies in the (x1.5) box of the track that was switched off
    const trackBox = boxAt(off, leak.frame)!;
    expect(coverage(leak.box, trackBox)).toBeGreaterThan(0.9);
    for (const other of faces.filter((t) => t !== off)) expect(iou(leak.box, boxAt(other, leak.frame)!)).toBe(0);
  });

  it("a track that ends early leaks from the first scanned frame after its end", async () => {
    const cut = faces[2]!;
    const lastFrame = 37;
    const short: Track = { ...cut, lastFrame, keyframes: cut.keyframes.filter((k) => k.frame <= lastFrame) };
    if (short.keyframes.at(-1)!.frame < lastFrame) short.keyframes.push({ ...short.keyframes.at(-1)!, frame: lastFrame });
    const { report } = await renderAndCheck("cut.mp4", faces.map((t) => (t === cut ? short : t)));
    expect(report.leaks).toHaveLength(1);
    const leak = report.leaks[0]!;
    // scanned frames are 0, 3, 6, ...: the first one after frame 37 is 39 (1.56 s)
    expect(leak).toMatchObject({ type: "face", firstFrame: 39, firstTime: 1.56, lastFrame: 72, lastTime: 2.88, hits: 12 });
    expect(coverage(leak.box, boxAt(cut, leak.frame)!)).toBeGreaterThan(0.9);
  });

  it("at the default face threshold, the dark background the detector takes for a face is dismissed by FaceMesh", async () => {
    // PIXELATE is deterministic (MOSAIC's pattern is keyed per render, and the encoder's artefacts
    // on the background, where the detector's weak false face lies, follow it).
    const pixelate = { ...config, redactionStyle: "PIXELATE" as const };
    const out = path.join(dir, "pixelate.mp4");
    await renderVideo(clip, out, { info, tracks: faces, config: pixelate });
    const report = await checkVideoLeaks(out, {
      tracks: faces,
      boxSpace: { width: info.video.displayWidth, height: info.video.displayHeight },
      fps: info.video.fps,
      style: pixelate,
      features: ["FACE_DETECTION"],
      settings: { ...settings, innerObjectsConfidenceThreshold: 0.15 },
    });
    expect(report.leaks).toEqual([]);
    // the patch left of the first person (scores vary a little between runs: sometimes a second weak patch)
    expect(report.dismissed.length).toBeGreaterThanOrEqual(1);
    const firstPerson = Math.min(...faces.map((t) => t.keyframes[0]!.box.x));
    expect(report.dismissed.some((d) => d.box.x < firstPerson)).toBe(true);
    for (const d of report.dismissed) {
      expect(d.score).toBeGreaterThanOrEqual(0.15);
      expect(d.score).toBeLessThan(0.5);
      expect(d.faceCheck).toBeLessThan(0.1);
      for (const t of faces) expect(iou(d.box, boxAt(t, d.frame)!)).toBeLessThan(0.1);
    }
    expect(leakSummary(report)).toMatchObject({ leakCount: 0, dismissedCount: report.dismissed.length });
  });

  it("OUTLINE redacts nothing: every face is reported", async () => {
    const { report } = await renderAndCheck("outline.mp4", faces, { redactionStyle: "OUTLINE" });
    expect(report.leaks).toHaveLength(3);
    for (const l of report.leaks) expect([l.firstFrame, l.lastFrame]).toEqual([0, 72]);
  });
});
