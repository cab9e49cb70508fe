/**
 * The renderer (server/render): pixel styles as pure functions on real frames (YUV from ffmpeg,
 * RGB from sharp), then whole renders through ffmpeg pipes compared with a plain transcode of the
 * same clip, face detection on redacted faces, audio masks measured on the output, and the output's
 * frame rate, size and rotation.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Box } from "@/lib/geometry";
import { iou } from "@/lib/geometry";
import { decodeFrames, decodeImageRgb, ffmpegPath, ffprobePath, probe, runFfmpeg, transcodeVideo, type MediaInfo } from "@/server/media";
import {
  audioMaskFilter,
  blockSize,
  displayToStored,
  frameObjects,
  frameRateArg,
  objectStyle,
  redactFrame,
  redactImage,
  renderVideo,
  rgbFrame,
  scrambleSettings,
  yuv420pFrame,
  type DrawStyle,
  type Intensity,
  type RedactionShape,
  type RedactionStyle,
  type RedactObject,
  type VideoRenderConfig,
} from "@/server/render";
import type { Track } from "@/server/tracking";
import { detectImage } from "@/server/vision/engine";
import { makeTestVideo } from "./helpers/fixtures";
import { tempDir } from "./helpers/server";
import { RENDER_DEFAULTS } from "@/lib/api/video";

const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
const STYLES: DrawStyle[] = ["BLUR", "PIXELATE", "MOSAIC", "FILL", "OUTLINE"];
const SHAPES: RedactionShape[] = ["RECTANGLE", "ELLIPSE"];
const INTENSITIES: Intensity[] = ["LOW", "MEDIUM", "HIGH"];

const baseConfig: VideoRenderConfig = { ...RENDER_DEFAULTS, maskAudioParams: [...RENDER_DEFAULTS.maskAudioParams], exportHashes: [] };
const styleOf = (s: RedactionStyle, shape: RedactionShape = "RECTANGLE", intensity: Intensity = "MEDIUM") => ({
  redactionStyle: s,
  redactionShape: shape,
  redactionIntensity: intensity,
  redactionColor: "#9F0500",
});

/** The sample photo as a clip: 640x360 (scaled to 640 wide, 20 px cropped off the top), 440 Hz tone. */
async function makeFaceClip(file: string, opts: { seconds: number; rotate?: 0 | 90 | 180 | 270 }): Promise<void> {
  const plain = opts.rotate ? `${file}.plain.mp4` : file;
  await runFfmpeg([
    "-loop", "1", "-framerate", "25", "-i", SAMPLE,
    "-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${opts.seconds}`,
    "-t", String(opts.seconds), "-vf", "scale=640:-2,crop=640:360:0:20",
    "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-shortest", plain,
  ]);
  // ffmpeg 4.1 writes a stream-copied rotate tag mirrored (test/helpers/fixtures.ts).
  if (opts.rotate) await runFfmpeg(["-i", plain, "-map", "0", "-c", "copy", "-metadata:s:v:0", `rotate=${(360 - opts.rotate) % 360}`, file]);
}

/** Frame `n` of a file, upright (ffmpeg's autorotate), as packed RGB. */
function frameRgb(file: string, info: MediaInfo, n: number): Uint8Array {
  const out = execFileSync(
    ffmpegPath(),
    ["-v", "error", "-i", file, "-vf", `select=eq(n\\,${n})`, "-vsync", "0", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
    { maxBuffer: 64 << 20 },
  );
  expect(out.length).toBe(info.video.displayWidth * info.video.displayHeight * 3);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

/** Frame 0 of a file as stored (no rotation), raw yuv420p. */
function frameYuv(file: string): Uint8Array {
  const out = execFileSync(ffmpegPath(), ["-v", "error", "-noautorotate", "-i", file, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"], { maxBuffer: 64 << 20 });
  return new Uint8Array(out);
}

/** Frames ffmpeg decodes from a file's video stream. */
function decodedFrames(file: string): number {
  const out = execFileSync(ffprobePath(), ["-v", "error", "-count_frames", "-select_streams", "V:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", file]);
  return Number(out.toString().trim());
}

/** Audio track as mono float samples at 16 kHz. */
function pcm(file: string): Float32Array {
  const out = execFileSync(ffmpegPath(), ["-v", "error", "-i", file, "-map", "0:a:0", "-ac", "1", "-ar", "16000", "-f", "f32le", "-"], { maxBuffer: 64 << 20 });
  return new Float32Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.length));
}

const rms = (s: Float32Array) => Math.sqrt(s.reduce((a, v) => a + v * v, 0) / Math.max(1, s.length));

/** Power of one frequency (Goertzel), normalised by length. */
function tone(s: Float32Array, rate: number, hz: number): number {
  const k = (2 * Math.PI * hz) / rate;
  const c = 2 * Math.cos(k);
  let s1 = 0;
  let s2 = 0;
  for (const v of s) {
    const s0 = v + c * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return (s1 * s1 + s2 * s2 - c * s1 * s2) / (s.length * s.length);
}

/** The strongest frequency between 100 Hz and 7.9 kHz, 10 Hz steps. */
function peak(s: Float32Array, rate = 16000): number {
  let best = 0;
  let at = 0;
  for (let f = 100; f < 7900; f += 10) {
    const p = tone(s, rate, f);
    if (p > best) [best, at] = [p, f];
  }
  return at;
}

/** Mean absolute difference of two RGB images over pixels where `where(x, y)` holds. */
function meanDiff(a: Uint8Array, b: Uint8Array, w: number, h: number, where: (x: number, y: number) => boolean): number {
  let sum = 0;
  let n = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (!where(x, y)) continue;
      const i = (y * w + x) * 3;
      sum += Math.abs(a[i]! - b[i]!) + Math.abs(a[i + 1]! - b[i + 1]!) + Math.abs(a[i + 2]! - b[i + 2]!);
      n += 3;
    }
  }
  return n ? sum / n : 0;
}

const inBox = (b: Box, margin = 0) => (x: number, y: number) => x >= b.x - margin && x < b.x + b.width + margin && y >= b.y - margin && y < b.y + b.height + margin;
const inAny = (boxes: Box[], margin = 0) => (x: number, y: number) => boxes.some((b) => inBox(b, margin)(x, y));
const shrink = (b: Box, by: number): Box => ({ x: b.x + by, y: b.y + by, width: b.width - 2 * by, height: b.height - 2 * by });

const still = (boxes: Box[], frames: number, type: Track["type"] = "face"): Track[] =>
  boxes.map((box, i) => ({
    id: i + 1,
    type,
    firstFrame: 0,
    lastFrame: frames - 1,
    keyframes: [
      { frame: 0, box, score: 1, source: "detected" },
      { frame: frames - 1, box, score: 1, source: "detected" },
    ],
  }));

let dir: string;
let faceClip: string;
let faceInfo: MediaInfo;
/** Face boxes (x1.5, as the detector gives them) on the 640x360 clip. */
let faces: Box[];

beforeAll(async () => {
  dir = tempDir("render");
  faceClip = path.join(dir, "faces.mp4");
  await makeFaceClip(faceClip, { seconds: 1 });
  faceInfo = await probe(faceClip);
  const found = await detectImage({ data: frameRgb(faceClip, faceInfo, 0), width: 640, height: 360 }, ["FACE_DETECTION"]);
  faces = found.filter((d) => d.score > 0.9).map((d) => d.box);
}, 300_000);

describe("styles and intensities (pure)", () => {
  it("sizes blocks from the box's longer side: 10 / 6 / 4 blocks, never under 2 px", () => {
    expect(blockSize(120, 80, "LOW")).toBe(12);
    expect(blockSize(80, 120, "MEDIUM")).toBe(20);
    expect(blockSize(100, 40, "HIGH")).toBe(25);
    expect(blockSize(8, 8, "MEDIUM")).toBe(2);
  });

  it("SMART picks a style per object type", () => {
    const smart = styleOf("SMART", "RECTANGLE", "MEDIUM");
    expect(objectStyle(smart, "face")).toMatchObject({ style: "BLUR", shape: "ELLIPSE", intensity: "HIGH" });
    expect(objectStyle(smart, "head")).toMatchObject({ style: "BLUR", shape: "ELLIPSE", intensity: "HIGH" });
    expect(objectStyle(smart, "person")).toMatchObject({ style: "BLUR", shape: "ELLIPSE", intensity: "MEDIUM" });
    expect(objectStyle(smart, "licensePlate")).toMatchObject({ style: "PIXELATE", shape: "RECTANGLE", intensity: "HIGH" });
    for (const t of ["id", "document", "screen"] as const) expect(objectStyle(smart, t)).toMatchObject({ style: "FILL", color: [0x9f, 0x05, 0] });
    expect(objectStyle(smart, "vehicle")).toMatchObject({ style: "PIXELATE", intensity: "MEDIUM" });
    expect(objectStyle(styleOf("FILL", "ELLIPSE", "LOW"), "face")).toMatchObject({ style: "FILL", shape: "ELLIPSE", intensity: "LOW" });
  });

  it("draws every style x shape x intensity on a real YUV frame and a real RGB image: inside changed, outside untouched", async () => {
    const yuv = frameYuv(faceClip);
    const rgb = await decodeImageRgb(SAMPLE);
    const bigFaces = faces.map((b) => ({ x: b.x * 3, y: (b.y + 20) * 3, width: b.width * 3, height: b.height * 3 })); // 1920-wide photo
    for (const [format, source, w, h, boxes] of [
      ["yuv", yuv, 640, 360, faces],
      ["rgb", rgb.data, rgb.width, rgb.height, bigFaces],
    ] as const) {
      for (const style of STYLES) {
        for (const shape of SHAPES) {
          for (const intensity of INTENSITIES) {
            const data = source.slice();
            const frame = format === "yuv" ? yuv420pFrame(data, w, h) : rgbFrame(data, w, h);
            redactFrame(
              frame,
              boxes.map((box, i) => ({ box, style: objectStyle(styleOf(style, shape, intensity), "face"), key: 1234 + i })),
            );
            const what = `${format} ${style} ${shape} ${intensity}`;
            // Outside every box (1 px for the chroma of odd edges): byte for byte the source.
            const luma = frame.planes[0]!;
            let changedOutside = 0;
            let changedInside = 0;
            let inside = 0;
            for (let y = 0; y < h; y++) {
              for (let x = 0; x < w; x++) {
                const i = luma.offset + y * luma.stride + x * luma.step;
                const diff = data[i] !== source[i];
                if (!inAny(boxes, 1)(x, y)) changedOutside += diff ? 1 : 0;
                else if (inAny(boxes.map((b) => shrink(b, 2)))(x, y)) {
                  inside++;
                  changedInside += diff ? 1 : 0;
                }
              }
            }
            expect(changedOutside, what).toBe(0);
            if (format === "yuv") expect(data.subarray(640 * 360).some((v, i) => v !== source[640 * 360 + i]), what).toBe(true);
            const fraction = changedInside / inside;
            if (style === "OUTLINE") expect(fraction, what).toBeLessThan(0.3); // the stroke only
            else if (shape === "ELLIPSE") expect(fraction, what).toBeGreaterThan(0.6); // pi/4 of the box
            else expect(fraction, what).toBeGreaterThan(0.85);
            if (shape === "ELLIPSE" && style !== "OUTLINE") {
              // the box's corners stay as they were
              const b = boxes[0]!;
              const corner = luma.offset + Math.ceil(b.y + 1) * luma.stride + Math.ceil(b.x + 1) * luma.step;
              expect(data[corner], what).toBe(source[corner]);
            }
          }
        }
      }
    }
  });

  it("keeps no detail finer than a block: BLUR, PIXELATE and MOSAIC give the same output for a 1-px checkerboard and flat grey", () => {
    const w = 96;
    const h = 96;
    const checker = new Uint8Array(w * h * 3);
    const flat = new Uint8Array(w * h * 3).fill(127);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) checker.fill((x + y) % 2 ? 254 : 0, (y * w + x) * 3, (y * w + x) * 3 + 3);
    // checker averages 127 over any block of an even number of pixels: blocks of 10 here.
    const box = { x: 16, y: 16, width: 60, height: 60 };
    for (const style of ["BLUR", "PIXELATE", "MOSAIC"] as const) {
      const a = checker.slice();
      const b = flat.slice();
      for (const d of [a, b]) redactFrame(rgbFrame(d, w, h), [{ box, style: objectStyle(styleOf(style), "face"), key: 7 }]);
      const inner = (img: Uint8Array) => Array.from({ length: 60 }, (_, r) => Array.from(img.subarray(((16 + r) * w + 16) * 3, ((16 + r) * w + 76) * 3))).flat();
      const da = inner(a);
      const db = inner(b);
      expect(Math.max(...da.map((v, i) => Math.abs(v - db[i]!))), style).toBeLessThanOrEqual(1);
    }
  });

  it("MOSAIC differs from PIXELATE by a keyed shuffle and noise, stable for one key", () => {
    const yuv = frameYuv(faceClip);
    const run = (style: "MOSAIC" | "PIXELATE", key: number) => {
      const d = yuv.slice();
      redactFrame(yuv420pFrame(d, 640, 360), [{ box: faces[0]!, style: objectStyle(styleOf(style), "face"), key }]);
      return d;
    };
    const m1 = run("MOSAIC", 1);
    expect(Buffer.compare(Buffer.from(m1), Buffer.from(run("MOSAIC", 1)))).toBe(0);
    expect(Buffer.compare(Buffer.from(m1), Buffer.from(run("MOSAIC", 2)))).not.toBe(0);
    const p = run("PIXELATE", 1);
    let differing = 0;
    const b = faces[0]!;
    for (let y = Math.ceil(b.y); y < b.y + b.height - 1; y++) for (let x = Math.ceil(b.x); x < b.x + b.width - 1; x++) differing += m1[y * 640 + x] !== p[y * 640 + x] ? 1 : 0;
    expect(differing / (b.width * b.height)).toBeGreaterThan(0.7);
  });

  it("maps frame rates, rotations, audio masks and tracks", () => {
    expect(frameRateArg(30000 / 1001)).toBe("30000/1001");
    expect(frameRateArg(25)).toBe("25");
    expect(frameRateArg(12.5)).toBe("12.500000");
    const b = { x: 10, y: 20, width: 30, height: 40 };
    // Display (360x640) of a stored 640x360 frame rotated 90 clockwise: display x runs down stored y reversed.
    expect(displayToStored(b, 90, 640, 360)).toEqual({ x: 20, y: 360 - 10 - 30, width: 40, height: 30 });
    expect(displayToStored(b, 180, 640, 360)).toEqual({ x: 640 - 40, y: 360 - 60, width: 30, height: 40 });
    expect(displayToStored(b, 270, 360, 640)).toEqual({ x: 360 - 20 - 40, y: 10, width: 40, height: 30 });
    expect(scrambleSettings([0.32, -0.24], 48000)).toEqual({ pitchFactor: 2 ** 0.32, inversionHz: 2879 });
    expect(scrambleSettings([0, 1], 8000).inversionHz).toBe(3600); // capped at 0.45 x the sample rate
    expect(audioMaskFilter(null, [0, 0], { sampleRate: 48000, channels: 2 })).toBeNull();
    expect(audioMaskFilter("SILENCE", [0, 0], { sampleRate: 48000, channels: 2 })).toBe("volume=0");
    expect(audioMaskFilter("BEEP", [0, 0], { sampleRate: 48000, channels: 2 })).toContain("sin(2*PI*1000*t)");
    expect(audioMaskFilter("SCRAMBLE", [0.32, -0.24], { sampleRate: 48000, channels: 2 })).toMatch(/^asetrate=59920,aresample=48000,atempo=0\.8\d+,.*val\(1\)\*2\*cos\(2\*PI\*2879\*t\)/);

    const tracks: Track[] = [
      { id: 1, type: "face", firstFrame: 0, lastFrame: 10, keyframes: [{ frame: 0, box: { x: 0, y: 0, width: 10, height: 10 }, score: 1, source: "detected" }, { frame: 10, box: { x: 100, y: 0, width: 10, height: 10 }, score: 1, source: "detected" }] },
      { id: 2, type: "face", firstFrame: 0, lastFrame: 10, enabled: false, keyframes: [{ frame: 0, box: { x: 50, y: 50, width: 10, height: 10 }, score: 1, source: "detected" }] },
      { id: 3, type: "licensePlate", manual: true, firstFrame: 5, lastFrame: 6, keyframes: [{ frame: 5, box: { x: 5, y: 5, width: 20, height: 10 }, score: null, source: "manual" }, { frame: 6, box: { x: 5, y: 5, width: 20, height: 10 }, score: null, source: "manual" }] },
    ];
    const perFrame = frameObjects(tracks, { ...faceInfo, video: { ...faceInfo.video, rotation: 0 } }, styleOf("SMART"), 9); // endless: one pull per decoded frame
    const frames: RedactObject[][] = Array.from({ length: 12 }, () => perFrame.next().value as RedactObject[]);
    expect(frames[5]!.map((o) => o.box.x)).toEqual([50, 5]); // interpolated; disabled track 2 not drawn; manual track 3 drawn
    expect(frames[5]![1]!.style.style).toBe("PIXELATE");
    expect(frames[11]).toEqual([]);
  });
});

describe("rendering videos", () => {
  let plain: string;

  beforeAll(async () => {
    plain = path.join(dir, "plain.mp4");
    await transcodeVideo(faceClip, plain, { info: faceInfo, quality: 0.65, preset: "ULTRAFAST" });
  });

  it("finds the three faces of the sample clip", () => {
    expect(faces.length).toBe(3);
  });

  it.each(["BLUR", "PIXELATE", "MOSAIC", "FILL", "OUTLINE", "SMART"] as const)("renders %s: faces changed, the rest as a plain transcode", async (style) => {
    const out = path.join(dir, `style-${style}.mp4`);
    const shape = style === "PIXELATE" || style === "FILL" ? "ELLIPSE" : "RECTANGLE";
    await renderVideo(faceClip, out, { info: faceInfo, tracks: still(faces, 25), config: { ...baseConfig, redactionStyle: style, redactionShape: shape } });
    const a = frameRgb(out, faceInfo, 12);
    const b = frameRgb(plain, faceInfo, 12);
    const outside = meanDiff(a, b, 640, 360, (x, y) => !inAny(faces, 16)(x, y));
    expect(outside, "outside the boxes").toBeLessThan(1.5);
    if (style === "OUTLINE") {
      expect(meanDiff(a, b, 640, 360, inAny(faces.map((f) => shrink(f, 8)))), "inside the outline").toBeLessThan(3);
      expect(meanDiff(a, b, 640, 360, (x, y) => inAny(faces)(x, y) && !inAny(faces.map((f) => shrink(f, 2)))(x, y)), "the outline").toBeGreaterThan(30);
    } else {
      expect(meanDiff(a, b, 640, 360, inAny(faces.map((f) => shrink(f, f.width * 0.2)))), "faces").toBeGreaterThan(8);
    }
  });

  it.each(["BLUR", "PIXELATE", "MOSAIC"] as const)("leaves no detectable face after %s at MEDIUM (video and image)", async (style) => {
    const out = path.join(dir, `faces-${style}.mp4`);
    await renderVideo(faceClip, out, { info: faceInfo, tracks: still(faces, 25), config: { ...baseConfig, redactionStyle: style } });
    const found = await detectImage({ data: frameRgb(out, faceInfo, 12), width: 640, height: 360 }, ["FACE_DETECTION"]);
    const videoHits = found.filter((d) => faces.some((f) => iou(d.box, f) > 0.2));
    if (videoHits.length) console.log(style, JSON.stringify(faces), JSON.stringify(videoHits));
    expect(videoHits, `video ${style}`).toEqual([]);

    const image = await decodeImageRgb(SAMPLE);
    // detectImage may remember an image by its buffer: detect on a copy, redact the original.
    const before = (await detectImage({ ...image, data: image.data.slice() }, ["FACE_DETECTION"])).filter((d) => d.score > 0.9);
    expect(before.length).toBe(3);
    redactImage(image, before.map((d) => ({ type: "face" as const, box: d.box })), styleOf(style));
    const after = await detectImage(image, ["FACE_DETECTION"]);
    const hits = after.filter((d) => before.some((f) => iou(d.box, f.box) > 0.2));
    if (hits.length) console.log(style, JSON.stringify(before), JSON.stringify(hits));
    expect(hits, `image ${style}`).toEqual([]);
  });

  it("keeps the source's size, frame rate, frame count and rotation, with boxes in display pixels", async () => {
    const rotated = path.join(dir, "rot90.mp4");
    await makeFaceClip(rotated, { seconds: 1, rotate: 90 });
    const info = await probe(rotated);
    expect(info.video).toMatchObject({ width: 640, height: 360, rotation: 90, displayWidth: 360, displayHeight: 640 });
    // The faces in display pixels of the rotated clip (stored frame turned 90 degrees clockwise).
    const shown = faces.map((b) => ({ x: 360 - b.y - b.height, y: b.x, width: b.height, height: b.width }));
    const out = path.join(dir, "rot90-out.mp4");
    await renderVideo(rotated, out, { info, tracks: still(shown, 25), config: { ...baseConfig, redactionStyle: "FILL" } });
    const o = await probe(out);
    expect(o.video).toMatchObject({ codec: "h264", width: 640, height: 360, rotation: 90, displayWidth: 360, displayHeight: 640, fps: 25, frameCount: info.video.frameCount });
    const a = frameRgb(out, o, 5);
    const b = frameRgb(rotated, info, 5);
    expect(meanDiff(a, b, 360, 640, (x, y) => !inAny(shown, 16)(x, y))).toBeLessThan(2);
    expect(meanDiff(a, b, 360, 640, inAny(shown.map((s) => shrink(s, s.width * 0.2))))).toBeGreaterThan(30);
    // FILL colour #9F0500 in the middle of the first face
    const c = shown[0]!;
    const i = (Math.round(c.y + c.height / 2) * 360 + Math.round(c.x + c.width / 2)) * 3;
    expect(Math.abs(a[i]! - 0x9f) + Math.abs(a[i + 1]! - 0x05) + Math.abs(a[i + 2]! - 0)).toBeLessThan(30);

    const odd = path.join(dir, "odd.avi");
    await makeTestVideo(odd, { seconds: 1, width: 321, height: 241, fps: 30000 / 1001, codec: "mpeg4" });
    const oddInfo = await probe(odd);
    const oddOut = path.join(dir, "odd-out.mp4");
    await renderVideo(odd, oddOut, { info: oddInfo, tracks: still([{ x: 300, y: 220, width: 40, height: 40 }], oddInfo.video.frameCount), config: baseConfig });
    const p = await probe(oddOut);
    // every decoded frame (this AVI's header counts one more frame than it holds)
    expect(p.video).toMatchObject({ width: 320, height: 240, rotation: 0, frameCount: decodedFrames(odd) });
    expect(p.video.fps).toBeCloseTo(30000 / 1001, 3);
    expect(p.audio?.codec).toBe("aac"); // mp3 re-encoded
  });

  it("puts a variable-frame-rate source on a constant timeline: every frame in time with the source, in detection and output", async () => {
    // 30 frames at 30 fps (1 s), then 20 frames at 10 fps (2 s): 50 frames over 3 s, with a tone
    const vfr = path.join(dir, "vfr.mp4");
    await runFfmpeg([
      "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3",
      "-vf", "setpts='(if(lt(N,30),N/30,1+(N-30)/10))/TB'", "-frames:v", "50", "-vsync", "vfr",
      "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-t", "3", vfr,
    ]);
    const info = await probe(vfr);
    expect(info.video.vfr).toBe(true);
    expect(info.video.fps).toBeGreaterThan(16); // 50 frames over 2.93 s (the last frame lasts 1/30 s)
    expect(info.video.fps).toBeLessThan(18);
    expect(info.video.frameCount).toBe(50);
    const steady = path.join(dir, "steady.mp4");
    await makeTestVideo(steady, { seconds: 1, width: 160, height: 120, fps: 30000 / 1001 });
    expect((await probe(steady)).video.vfr).toBe(false);
    // detection frames follow the constant timeline
    let decoded = 0;
    for await (const _ of decodeFrames(vfr, info, { maxSide: 160 })) decoded++;
    expect(Math.abs(decoded - 50)).toBeLessThanOrEqual(1);
    // the output is constant-rate, as long as the source, and shows at time t what the source shows at t
    const out = path.join(dir, "vfr-out.mp4");
    const box = { x: 0, y: 0, width: 40, height: 40 };
    await renderVideo(vfr, out, { info, tracks: still([box], info.video.frameCount), config: { ...baseConfig, redactionStyle: "FILL" } });
    const o = await probe(out);
    expect(o.video.vfr).toBe(false);
    expect(Math.abs((o.durationSeconds ?? 0) - (info.durationSeconds ?? 0))).toBeLessThan(0.15);
    const at = (file: string, t: number) =>
      execFileSync(ffmpegPath(), ["-v", "error", "-ss", String(t), "-i", file, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], { maxBuffer: 16 << 20 });
    const outside = (x: number, y: number) => x >= 48 || y >= 48;
    for (const t of [0.5, 1.55, 2.55]) {
      const same = meanDiff(at(out, t), at(vfr, t), 320, 240, outside);
      const late = meanDiff(at(out, t), at(vfr, t - 0.35), 320, 240, outside);
      expect(same, `t=${t}`).toBeLessThan(late / 3);
    }
  });

  it("keeps non-square pixels: an anamorphic source plays as wide after rendering", async () => {
    const wide = path.join(dir, "anamorphic.mp4");
    await runFfmpeg(["-f", "lavfi", "-i", "testsrc2=size=360x240:rate=25", "-t", "0.4", "-vf", "setsar=32/27", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", wide]);
    const info = await probe(wide);
    expect(info.video).toMatchObject({ width: 360, height: 240, displayWidth: 360, sar: [32, 27] });
    const out = path.join(dir, "anamorphic-out.mp4");
    await renderVideo(wide, out, { info, tracks: still([{ x: 10, y: 10, width: 50, height: 50 }], info.video.frameCount), config: baseConfig });
    expect((await probe(out)).video).toMatchObject({ width: 360, height: 240, sar: [32, 27] });
    expect((await probe(path.join(dir, "steady.mp4"))).video.sar).toBeUndefined();
  });

  it("masks audio: SILENCE has no energy, BEEP is 1 kHz, SCRAMBLE moves the tone and keeps the length; unset copies it", async () => {
    const clip = path.join(dir, "tone.mp4");
    await makeTestVideo(clip, { seconds: 2, width: 160, height: 120 });
    const info = await probe(clip);
    const source = pcm(clip);
    expect(peak(source)).toBe(440);
    const render = async (maskAudio: VideoRenderConfig["maskAudio"]) => {
      const out = path.join(dir, `tone-${maskAudio ?? "none"}.mp4`);
      await renderVideo(clip, out, { info, tracks: [], config: { ...baseConfig, maskAudio } });
      return { out, samples: pcm(out), info: await probe(out) };
    };
    const none = await render(null);
    expect(none.info.audio).toMatchObject({ codec: "aac", channels: info.audio!.channels, sampleRate: info.audio!.sampleRate });
    expect(peak(none.samples)).toBe(440);
    expect(Math.abs(rms(none.samples) - rms(source))).toBeLessThan(0.01);

    const silence = await render("SILENCE");
    expect(rms(silence.samples)).toBeLessThan(1e-4);
    expect(Math.abs(silence.samples.length - source.length)).toBeLessThan(1600); // 0.1 s

    const beep = await render("BEEP");
    expect(peak(beep.samples)).toBe(1000);
    expect(rms(beep.samples)).toBeGreaterThan(0.15); // 0.25 peak sine: rms 0.177
    expect(tone(beep.samples, 16000, 440)).toBeLessThan(tone(beep.samples, 16000, 1000) / 1000);

    const scramble = await render("SCRAMBLE");
    const { pitchFactor, inversionHz } = scrambleSettings([0.32, -0.24], 48000);
    const expected = inversionHz - 440 * pitchFactor; // 2879 - 549 = 2330 Hz
    expect(Math.abs(peak(scramble.samples) - expected)).toBeLessThanOrEqual(20);
    expect(tone(scramble.samples, 16000, 440)).toBeLessThan(tone(scramble.samples, 16000, Math.round(expected / 10) * 10) / 100);
    expect(rms(scramble.samples)).toBeGreaterThan(0.3 * rms(source)); // near the low-passes' corner: a few dB quieter
    expect(Math.abs(scramble.samples.length - source.length)).toBeLessThan(1600);
    expect(Math.abs((scramble.info.durationSeconds ?? 0) - (info.durationSeconds ?? 0))).toBeLessThan(0.1);
  });

  it("measures render speed against a plain transcode of the same clip", async () => {
    const clip = path.join(dir, "speed.mp4");
    await makeFaceClip(clip, { seconds: 4 });
    const info = await probe(clip);
    let t = performance.now();
    await transcodeVideo(clip, path.join(dir, "speed-plain.mp4"), { info, quality: 0.65, preset: "ULTRAFAST" });
    const plainSeconds = (performance.now() - t) / 1000;
    t = performance.now();
    const r = await renderVideo(clip, path.join(dir, "speed-mosaic.mp4"), { info, tracks: still(faces, 100), config: baseConfig });
    const renderSeconds = (performance.now() - t) / 1000;
    const ratio = renderSeconds / plainSeconds;
    console.log(
      `render speed, 640x360 100 frames, 3 faces MOSAIC: plain transcode ${plainSeconds.toFixed(2)} s, render ${renderSeconds.toFixed(2)} s ` +
        `(redaction ${((r.redactSeconds / r.frames) * 1000).toFixed(2)} ms/frame), ratio ${ratio.toFixed(2)}`,
    );
    expect(r.frames).toBe(100);
    expect(ratio).toBeLessThan(8);
  });
});
