/**
 * Face detection (FaceBoxes at 1x and 2x + BlazeFace tiles, fused by cross-source agreement): the
 * pure helpers with exact cases, then the real models on face-api's demo photos (hand-labelled
 * faces), a plain gradient, the photo shrunk so its faces are ~20-30 px high on a 1280x720 canvas,
 * and the FaceMesh verifier on face and non-face crops.
 */
import path from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { type Box, coverage, iou } from "@/lib/geometry";
import { FACE_DEFAULTS, FaceDetector, calibrate, mergeFaces, tileGrid, uncalibrate } from "@/server/vision/faces";
import { facemeshScores, squareCrop } from "@/server/vision/face-verify";
import type { Detection, RgbImage } from "@/server/vision/types";
import { useModelDataDir } from "./helpers/models";

const DEMO = path.join(process.cwd(), "node_modules/@vladmandic/face-api/demo");

useModelDataDir("faces", /^(faceboxes|blazeface-back|facemesh)-[0-9a-f]{12}\.onnx$/);

async function rgb(s: ReturnType<typeof sharp>): Promise<RgbImage> {
  const { data, info } = await s.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
}
const photo = (name: string) => sharp(path.join(DEMO, name)).rotate();
const inside = (b: Box, w: number, h: number) => b.x >= 0 && b.y >= 0 && b.x + b.width <= w + 1e-6 && b.y + b.height <= h + 1e-6 && b.width > 0 && b.height > 0;
/** A face counts as found when one detection (engine-expanded x1.5 would be larger) overlaps it well. */
const finds = (face: Box, dets: Detection[]) => dets.some((d) => iou(face, d.box) >= 0.3 && coverage(d.box, face) >= 0.6);

// Hand-labelled tight face boxes (forehead to chin) in the full-size 1920 px photos.
const SAMPLE1_FACES: Box[] = [
  { x: 400, y: 350, width: 220, height: 250 },
  { x: 820, y: 400, width: 220, height: 260 },
  { x: 1450, y: 200, width: 240, height: 270 },
];
const SAMPLE2_FACES: Box[] = [
  { x: 360, y: 130, width: 200, height: 260 },
  { x: 880, y: 250, width: 200, height: 240 },
  { x: 1440, y: 160, width: 220, height: 240 },
];

describe("face helpers", () => {
  it("tiles cover the image with overlap, one tile when it fits", () => {
    expect(tileGrid(200, 100, 256, 0.25)).toEqual([{ x: 0, y: 0, width: 200, height: 100 }]);
    const t = tileGrid(1000, 256, 256, 0.25);
    expect(t[0]!.x).toBe(0);
    expect(t.at(-1)!.x + 256).toBe(1000);
    for (let i = 1; i < t.length; i++) expect(t[i - 1]!.x + 256 - t[i]!.x).toBeGreaterThanOrEqual(64);
  });

  it("calibration maps the reference score to 0.15 and is invertible", () => {
    expect(calibrate(0.3, 0.3)).toBeCloseTo(0.15);
    expect(calibrate(1, 0.3)).toBeCloseTo(1);
    expect(calibrate(0, 0.3)).toBe(0);
    for (const s of [0.05, 0.15, 0.5, 0.9]) expect(calibrate(uncalibrate(s, 0.25), 0.25)).toBeCloseTo(s);
  });

  it("merges overlapping and contained boxes, keeping the best", () => {
    const a = { box: { x: 0, y: 0, width: 100, height: 100 }, score: 0.9 };
    const b = { box: { x: 10, y: 10, width: 100, height: 100 }, score: 0.8 }; // IoU 0.68 with a
    const c = { box: { x: 20, y: 20, width: 40, height: 40 }, score: 0.95 }; // inside a, but better
    const d = { box: { x: 300, y: 0, width: 50, height: 50 }, score: 0.2 };
    const e = { box: { x: 305, y: 5, width: 30, height: 30 }, score: 0.1 }; // inside d
    expect(mergeFaces([a, b, c, d, e], 0.4, 0.7)).toEqual([c, a, d]);
  });
  it("square crops are centred on the box and repeat the edge outside the image", () => {
    const img: RgbImage = { width: 4, height: 2, data: new Uint8Array([0, 0, 0, 10, 10, 10, 20, 20, 20, 30, 30, 30, 0, 0, 0, 10, 10, 10, 20, 20, 20, 30, 30, 30]) };
    const c = squareCrop(img, { x: 0, y: 0, width: 4, height: 2 }, 1, 4);
    expect([...c.filter((_, i) => i % 3 === 0)].slice(0, 4)).toEqual([0, 10, 20, 30]); // row 0 = image row (edge above)
    const out = squareCrop(img, { x: -10, y: 0, width: 2, height: 2 }, 1, 2);
    expect([...out]).toEqual(new Array(12).fill(0)); // left of the image: the left edge's colour
  });
});

describe("FaceDetector on photos", () => {
  const det = new FaceDetector();

  it("finds the three faces of sample1 with tight boxes inside the image", async () => {
    const img = await rgb(photo("sample1.jpg"));
    const dets = await det.detect(img, { threshold: 0.15 });
    for (const f of SAMPLE1_FACES) expect(finds(f, dets), JSON.stringify(f)).toBe(true);
    for (const d of dets) {
      expect(d.type).toBe("face");
      expect(inside(d.box, img.width, img.height)).toBe(true);
      expect(d.score).toBeGreaterThanOrEqual(0.15);
      expect(d.score).toBeLessThanOrEqual(1);
    }
    // The three best boxes are the three faces, and there are few extra boxes.
    const best = [...dets].sort((a, b) => b.score - a.score).slice(0, 3);
    for (const f of SAMPLE1_FACES) expect(finds(f, best)).toBe(true);
    expect(best.every((d) => d.score > 0.8)).toBe(true);
    expect(dets.length).toBeLessThanOrEqual(15);
  }, 30_000);

  it("finds the three faces of sample2", async () => {
    const img = await rgb(photo("sample2.jpg"));
    const dets = await det.detect(img, { threshold: 0.15 });
    for (const f of SAMPLE2_FACES) expect(finds(f, dets), JSON.stringify(f)).toBe(true);
  }, 30_000);

  it("gives no faces on a plain gradient", async () => {
    const w = 1280;
    const h = 720;
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#204080"/><stop offset="1" stop-color="#f0c090"/></linearGradient></defs><rect width="${w}" height="${h}" fill="url(#g)"/></svg>`;
    const img = await rgb(sharp(Buffer.from(svg)));
    expect(await det.detect(img, { threshold: 0.15 })).toEqual([]);
  }, 30_000);

  it("finds faces ~20-30 px high on a 1280x720 canvas", async () => {
    // sample1 shrunk 1920 -> 192 px wide (faces 25-27 px high), pasted at (700, 400).
    const k = 0.1;
    const small = await photo("sample1.jpg").resize(Math.round(1920 * k)).png().toBuffer();
    const ox = 700;
    const oy = 400;
    const canvas = sharp({ create: { width: 1280, height: 720, channels: 3, background: { r: 90, g: 100, b: 110 } } }).composite([{ input: small, left: ox, top: oy }]);
    const img = await rgb(sharp(await canvas.png().toBuffer()));
    const dets = await det.detect(img, { threshold: 0.15 });
    const faces = SAMPLE1_FACES.map((f) => ({ x: ox + f.x * k, y: oy + f.y * k, width: f.width * k, height: f.height * k }));
    for (const f of faces) expect(finds(f, dets), JSON.stringify(f)).toBe(true);
    for (const d of dets) expect(inside(d.box, img.width, img.height)).toBe(true);
  }, 30_000);
});

describe("FaceMesh verifier", () => {
  it("scores the sample faces near 1 and background, a gradient and noise near 0", async () => {
    const img = await rgb(photo("sample1.jpg"));
    const faces = await facemeshScores(img, SAMPLE1_FACES, { cropFactor: 1.5, batch: 4 });
    for (const s of faces) expect(s).toBeGreaterThan(0.9);
    // Wall / clothing regions of the same photo (no face inside the 1.5x crop).
    const background = await facemeshScores(img, [{ x: 60, y: 900, width: 160, height: 160 }, { x: 1700, y: 900, width: 150, height: 150 }], { cropFactor: 1.5, batch: 4 });
    for (const s of background) expect(s).toBeLessThan(0.1);
    const noise = new Uint8Array(256 * 256 * 3);
    let x = 12345;
    for (let i = 0; i < noise.length; i++) noise[i] = (x = (x * 1103515245 + 12345) % 2147483648) >> 23;
    const [n] = await facemeshScores({ data: noise, width: 256, height: 256 }, [{ x: 64, y: 64, width: 128, height: 128 }], { cropFactor: 1.5, batch: 1 });
    expect(n).toBeLessThan(0.1);
  }, 30_000);

  it("with the verifier on, the sample faces stay and a gradient gives no faces", async () => {
    const det = new FaceDetector({ verify: { minFace: 24, confident: 1 } });
    expect(det.options.passes).toEqual(FACE_DEFAULTS.passes);
    const img = await rgb(photo("sample2.jpg"));
    const dets = await det.detect(img, { threshold: 0.15 });
    for (const f of SAMPLE2_FACES) expect(finds(f, dets), JSON.stringify(f)).toBe(true);
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="480"><defs><linearGradient id="g"><stop offset="0" stop-color="#335"/><stop offset="1" stop-color="#eda"/></linearGradient></defs><rect width="640" height="480" fill="url(#g)"/></svg>`;
    expect(await det.detect(await rgb(sharp(Buffer.from(svg))), { threshold: 0.15 })).toEqual([]);
  }, 30_000);

  it("options compose: one pass without BlazeFace or SSD, partial fusion", () => {
    const det = new FaceDetector({ passes: [{ scale: 1, minFace: 16, maxFace: 100000, reference: 0.3 }], blazeface: { tile: 0 }, ssd: [], fusion: { reference: 0.15, minSource: { ssd: 0.2 } } });
    expect(det.options.blazeface.overlap).toBe(FACE_DEFAULTS.blazeface.overlap);
    expect(det.options.fusion.joinIou).toBe(FACE_DEFAULTS.fusion.joinIou);
    expect(det.options.fusion.reference).toBe(0.15);
    expect(det.options.fusion.minSource).toEqual({ ...FACE_DEFAULTS.fusion.minSource, ssd: 0.2 });
    expect(() => new FaceDetector({ fusion: { reference: 1 } })).toThrow(/fusion.reference/);
    expect(() => new FaceDetector({ ssd: [{ across: 0, overlap: 0.25 }] })).toThrow(/across/);
    expect(() => new FaceDetector({ passes: [], blazeface: { tile: 0 }, ssd: [] })).toThrow(/at least one/);
  });
});
