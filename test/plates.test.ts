/**
 * Plate detection on PP-OCRv4 text detection: the pure geometry and post-processing with exact
 * small cases, then the real model on synthetic images drawn with sharp (glyphs are SVG strokes,
 * so no system font is needed).
 */
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { type Box, coverage } from "@/lib/geometry";
import { session } from "@/server/vision/onnx";
import { PlateDetector, platesFromText } from "@/server/vision/plates";
import { minAreaRect, resizeTarget, textBoxesFromProbMap, textDetectModelPath, type Point, type TextBox } from "@/server/vision/text-detect";
import type { RgbImage } from "@/server/vision/types";
import { carSvg } from "./helpers/scenes";

async function rgbOf(svg: string): Promise<RgbImage> {
  const { data, info } = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
}

const inside = (b: Box, w: number, h: number) => b.x >= 0 && b.y >= 0 && b.x + b.width <= w + 1e-9 && b.y + b.height <= h + 1e-9 && b.width > 0 && b.height > 0;

/** A horizontal text line as the text detector reports it. */
function line(x: number, y: number, width: number, height: number, score = 0.9): TextBox {
  const quad: [Point, Point, Point, Point] = [
    [x, y],
    [x + width, y],
    [x + width, y + height],
    [x, y + height],
  ];
  return { box: { x, y, width, height }, quad, score };
}

describe("text detection geometry", () => {
  it("sizes the model input to multiples of 32 within maxSide", () => {
    expect(resizeTarget(1280, 720, 1, 1280)).toEqual({ width: 1280, height: 736 });
    expect(resizeTarget(1920, 1080, 1, 1280)).toEqual({ width: 1280, height: 736 });
    expect(resizeTarget(640, 480, 2, 2560)).toEqual({ width: 1280, height: 960 });
    expect(resizeTarget(10, 10, 1, 1280)).toEqual({ width: 32, height: 32 });
  });

  it("finds the minimum-area rectangle of a rotated rectangle", () => {
    const a = (30 * Math.PI) / 180;
    const corners: Point[] = [
      [-20, -5],
      [20, -5],
      [20, 5],
      [-20, 5],
    ].map(([u, v]) => [100 + u * Math.cos(a) - v * Math.sin(a), 50 + u * Math.sin(a) + v * Math.cos(a)]);
    const r = minAreaRect(corners);
    expect(r.width).toBeCloseTo(40, 6);
    expect(r.height).toBeCloseTo(10, 6);
    expect(r.cx).toBeCloseTo(100, 6);
    expect(r.cy).toBeCloseTo(50, 6);
    expect(r.angle).toBeCloseTo(a, 6);
  });

  it("turns a probability map into unclipped, scaled text boxes", () => {
    const w = 40;
    const h = 20;
    const prob = new Float32Array(w * h);
    for (let y = 8; y < 12; y++) for (let x = 10; x < 30; x++) prob[y * w + x] = 0.9; // a 20x4 line
    prob[2 * w + 2] = 0.9; // a lone pixel: too small
    const boxes = textBoxesFromProbMap(prob, w, h, { binThreshold: 0.3, boxThreshold: 0.5, unclipRatio: 1.5, minSize: 3, scaleX: 2, scaleY: 2 });
    expect(boxes).toHaveLength(1);
    // unclip: each side grows by 20*4*1.5 / (2*(20+4)) = 2.5 map pixels
    expect(boxes[0].box.x).toBeCloseTo(2 * 7.5, 6);
    expect(boxes[0].box.y).toBeCloseTo(2 * 5.5, 6);
    expect(boxes[0].box.width).toBeCloseTo(2 * 25, 6);
    expect(boxes[0].box.height).toBeCloseTo(2 * 9, 6);
    expect(boxes[0].score).toBeCloseTo(0.9, 5);
  });

  it("drops lines whose mean probability is under boxThreshold", () => {
    const w = 40;
    const h = 20;
    const prob = new Float32Array(w * h);
    for (let y = 8; y < 12; y++) for (let x = 10; x < 30; x++) prob[y * w + x] = 0.4;
    expect(textBoxesFromProbMap(prob, w, h, { binThreshold: 0.3, boxThreshold: 0.5, unclipRatio: 1.5, minSize: 3 })).toHaveLength(0);
  });
});

describe("plate candidates from text lines", () => {
  it("grows a plate-shaped line ~1.15x along and ~1.8x across", () => {
    const d = platesFromText([line(100, 100, 100, 40)], 800, 600);
    expect(d).toHaveLength(1);
    expect(d[0].type).toBe("licensePlate");
    expect(d[0].box.width).toBeCloseTo(115, 6);
    expect(d[0].box.height).toBeCloseTo(72, 6);
    expect(d[0].box.x + d[0].box.width / 2).toBeCloseTo(150, 6);
  });

  it("rejects lines without a plate's shape or size", () => {
    const lines = [
      line(10, 10, 400, 40), // aspect 10: a sentence
      line(10, 100, 40, 40), // aspect 1: a single symbol
      line(10, 200, 20, 8), // too small
    ];
    expect(platesFromText(lines, 800, 600)).toEqual([]);
  });

  it("rejects paragraph text (similar lines stacked above and below)", () => {
    const para = [line(100, 100, 120, 40), line(100, 150, 120, 40), line(100, 200, 120, 40)];
    expect(platesFromText(para, 800, 600)).toEqual([]);
    // two similar rows may be a two-row plate: kept
    expect(platesFromText(para.slice(0, 2), 800, 600).length).toBeGreaterThan(0);
  });

  it("joins the fragments of one plate line", () => {
    const plate: Box = { x: 100, y: 85, width: 170, height: 70 };
    const parts = [line(110, 100, 60, 40, 0.8), line(190, 100, 70, 40, 0.9)]; // "ABC" "1234" around a gap
    expect(platesFromText(parts, 800, 600, { joinGap: -1e9 }).some((d) => coverage(plate, d.box) >= 0.7)).toBe(false);
    const out = platesFromText(parts, 800, 600);
    expect(out.some((d) => coverage(plate, d.box) >= 0.7)).toBe(true);
  });

  it("applies the threshold and keeps boxes inside the image", () => {
    const lines = [line(-10, 580, 100, 40, 0.9), line(300, 300, 100, 40, 0.4)];
    const out = platesFromText(lines, 800, 600, {}, 0.5);
    expect(out).toHaveLength(1);
    for (const d of out) expect(inside(d.box, 800, 600)).toBe(true);
  });
});

describe("PlateDetector on PP-OCRv4", () => {
  const detector = new PlateDetector();

  it("is named and typed", () => {
    expect(detector.name).toBe("plates-ppocr");
    expect(detector.types).toEqual(["licensePlate"]);
  });

  it("finds the plate on a synthetic car, with every box inside the image", async () => {
    const plate: Box = { x: 300, y: 380, width: 200, height: 100 };
    const image = await rgbOf(carSvg(plate));
    const found = await detector.detect(image, { threshold: 0.3 });
    expect(found.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...found.map((d) => coverage(plate, d.box)))).toBeGreaterThanOrEqual(0.7);
    for (const d of found) {
      expect(d.type).toBe("licensePlate");
      expect(d.score).toBeGreaterThanOrEqual(0.3);
      expect(d.score).toBeLessThanOrEqual(1);
      expect(inside(d.box, image.width, image.height)).toBe(true);
    }
  });

  it("finds a tilted plate and one cut by the image edge", async () => {
    const tilted: Box = { x: 300, y: 380, width: 200, height: 100 };
    const a = await detector.detect(await rgbOf(carSvg(tilted, 8)), { threshold: 0.3 });
    expect(Math.max(0, ...a.map((d) => coverage(tilted, d.box)))).toBeGreaterThanOrEqual(0.7);
    const edge: Box = { x: 640, y: 520, width: 200, height: 100 }; // 40 px beyond the right and bottom edges
    const b = await detector.detect(await rgbOf(carSvg(edge)), { threshold: 0.3 });
    for (const d of b) expect(inside(d.box, 800, 600)).toBe(true);
    const visible: Box = { x: 640, y: 520, width: 160, height: 80 };
    expect(Math.max(0, ...b.map((d) => coverage(visible, d.box)))).toBeGreaterThanOrEqual(0.7);
  });

  it("finds no plate in a plain image", async () => {
    const plain = await rgbOf(`<svg xmlns="http://www.w3.org/2000/svg" width="640" height="480"><rect width="640" height="480" fill="#9aa"/></svg>`);
    expect(await detector.detect(plain, { threshold: 0.05 })).toEqual([]);
  });

  it("reuses one ONNX session across calls, and one text detection per image", async () => {
    const s = await session(textDetectModelPath());
    const run = s.run.bind(s);
    let calls = 0;
    s.run = ((...a: Parameters<typeof s.run>) => {
      calls++;
      return run(...a);
    }) as typeof s.run;
    try {
      const image = await rgbOf(carSvg({ x: 300, y: 380, width: 200, height: 100 }));
      await detector.detect(image, { threshold: 0.3 });
      await new PlateDetector().detect(image, { threshold: 0.3 });
      expect(calls).toBe(1); // text detection of one image is shared (plates and documents)
      await detector.detect({ ...image, data: image.data.slice() }, { threshold: 0.3 });
      expect(calls).toBe(2);
      expect(await session(textDetectModelPath())).toBe(s);
    } finally {
      s.run = run;
    }
  });

  it("rejects a malformed image", async () => {
    await expect(detector.detect({ data: new Uint8Array(10), width: 4, height: 4 }, { threshold: 0.3 })).rejects.toThrow(/48 bytes/);
  });
});
