/**
 * ID cards (face + small print, card-shaped) and heads from faces: the pure rules with exact
 * cases, then the real engine on a synthetic card carrying a real portrait (face-api's demo photo),
 * tilted and mirrored, and on scenes that must give no card (the bare photo, a page of text).
 */
import path from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { type Box, coverage, iou } from "@/lib/geometry";
import { detectImage } from "@/server/vision/engine";
import { headFromFace, mergeHeads } from "@/server/vision/heads";
import { idCardsFromFacesAndText } from "@/server/vision/ids";
import type { TextBox } from "@/server/vision/text-detect";
import type { Detection, RgbImage } from "@/server/vision/types";
import { idCardSvg, pageSvg } from "./helpers/scenes";
import { useModelDataDir } from "./helpers/models";

const DEMO = path.join(process.cwd(), "node_modules/@vladmandic/face-api/demo");
useModelDataDir("ids");

async function rgb(s: ReturnType<typeof sharp>): Promise<RgbImage> {
  const { data, info } = await s.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
}

const CARD: Box = { x: 330, y: 170, width: 600, height: 378 };
const PHOTO: Box = { x: 360, y: 230, width: 150, height: 190 };
/** The synthetic card with the middle face of sample1.jpg as its portrait, as a sharp pipeline. */
async function cardImage(): Promise<Buffer> {
  const face = await sharp(path.join(DEMO, "sample1.jpg")).rotate().extract({ left: 770, top: 300, width: 320, height: 410 }).resize(PHOTO.width, PHOTO.height).toBuffer();
  return sharp(Buffer.from(idCardSvg(CARD, PHOTO))).composite([{ input: face, left: PHOTO.x, top: PHOTO.y }]).png().toBuffer();
}

const line = (x: number, y: number, w: number, h: number, score = 0.9): TextBox => ({
  box: { x, y, width: w, height: h },
  quad: [[x, y], [x + w, y], [x + w, y + h], [x, y + h]],
  score,
});
const face = (x: number, y: number, w: number, h: number, score = 0.9): Detection => ({ type: "face", score, box: { x, y, width: w, height: h } });

describe("ID card rules", () => {
  it("a face with lines of small print beside it is a card-shaped ID covering both", () => {
    const f = face(100, 100, 80, 100);
    const lines = [line(230, 90, 200, 16), line(230, 130, 180, 16), line(230, 170, 220, 16)];
    const [id, ...rest] = idCardsFromFacesAndText([f], lines, 1000, 800, 0.15);
    expect(rest).toEqual([]);
    expect(id!.type).toBe("id");
    for (const b of [f.box, ...lines.map((l) => l.box)]) expect(coverage(b, id!.box)).toBeCloseTo(1, 5);
    expect(id!.box.width / id!.box.height).toBeGreaterThanOrEqual(1.5);
  });

  it("mirrored cards (print on the left) and portrait cards (print below) are found", () => {
    const left = idCardsFromFacesAndText([face(500, 100, 80, 100)], [line(250, 100, 200, 16), line(270, 140, 180, 16)], 1000, 800, 0.15);
    expect(left).toHaveLength(1);
    expect(left[0]!.box.x).toBeLessThan(250);
    const below = idCardsFromFacesAndText([face(100, 100, 80, 100)], [line(90, 250, 110, 14), line(95, 280, 100, 14), line(90, 310, 105, 14)], 1000, 800, 0.15);
    expect(below).toHaveLength(1);
    expect(below[0]!.label).toBe("portrait card");
    expect(below[0]!.box.height).toBeGreaterThan(below[0]!.box.width);
  });

  it("no card without enough print, with sign-sized letters, or with print far away", () => {
    const f = face(100, 100, 80, 100);
    expect(idCardsFromFacesAndText([f], [line(230, 120, 200, 16)], 1000, 800, 0.15)).toEqual([]);
    expect(idCardsFromFacesAndText([f], [line(230, 90, 300, 70), line(230, 170, 300, 70)], 1000, 800, 0.15)).toEqual([]);
    expect(idCardsFromFacesAndText([f], [line(700, 120, 200, 16), line(700, 160, 200, 16)], 1000, 800, 0.15)).toEqual([]);
    expect(idCardsFromFacesAndText([], [line(230, 90, 200, 16), line(230, 130, 180, 16)], 1000, 800, 0.15)).toEqual([]);
  });

  it("a second (ghost) portrait on the same card merges into one ID", () => {
    const lines = [line(230, 90, 200, 16), line(230, 130, 180, 16), line(230, 170, 220, 16)];
    const ids = idCardsFromFacesAndText([face(100, 100, 80, 100), face(190, 200, 24, 30, 0.5)], lines, 1000, 800, 0.15);
    expect(ids).toHaveLength(1);
  });
});

describe("heads from faces", () => {
  it("grows a face to its head and merges it with an overlapping pose head", () => {
    const f: Box = { x: 100, y: 100, width: 40, height: 50 };
    const h = headFromFace(f);
    expect(coverage(f, h)).toBe(1);
    expect(h.y).toBeLessThan(f.y - 0.3 * f.height);
    const pose: Detection = { type: "head", score: 0.4, box: { x: 85, y: 70, width: 70, height: 90 }, label: "pose" };
    const faceHead: Detection = { type: "head", score: 0.9, box: h, label: "face" };
    const merged = mergeHeads([pose], [faceHead]);
    expect(merged).toHaveLength(1);
    expect(merged[0]!.score).toBe(0.9);
    expect(coverage(h, merged[0]!.box)).toBeCloseTo(1, 6);
    expect(coverage(pose.box, merged[0]!.box)).toBeCloseTo(1, 6);
    const apart: Detection = { ...faceHead, box: { ...h, x: 400 } };
    expect(mergeHeads([pose], [apart])).toHaveLength(2);
  });
});

describe("real models", () => {
  it("finds the ID card around a real portrait, and its face", async () => {
    const img = await rgb(sharp(await cardImage()));
    const dets = await detectImage(img, ["ID_DETECTION", "FACE_DETECTION"]);
    const ids = dets.filter((d) => d.type === "id");
    expect(ids).toHaveLength(1);
    expect(iou(ids[0]!.box, CARD)).toBeGreaterThan(0.6);
    expect(coverage(PHOTO, ids[0]!.box)).toBeGreaterThan(0.95);
    expect(dets.filter((d) => d.type === "face")).toHaveLength(1);
  });

  it("finds the card tilted by 8 degrees and mirrored", async () => {
    const tilted = await rgb(sharp(await cardImage()).rotate(8, { background: "#6b5a48" }));
    const t = (await detectImage(tilted, ["ID_DETECTION"])).filter((d) => d.type === "id");
    expect(t).toHaveLength(1);
    expect(t[0]!.box.width * t[0]!.box.height).toBeGreaterThan(0.5 * CARD.width * CARD.height);
    const mirrored = await rgb(sharp(await cardImage()).flop());
    const m = (await detectImage(mirrored, ["ID_DETECTION"])).filter((d) => d.type === "id");
    expect(m).toHaveLength(1);
    const flipped: Box = { ...CARD, x: 1280 - CARD.x - CARD.width };
    expect(iou(m[0]!.box, flipped)).toBeGreaterThan(0.6);
  });

  it("no ID on a photo of people or a page of text", async () => {
    expect(await detectImage(await rgb(sharp(path.join(DEMO, "sample1.jpg")).rotate().resize(1280)), ["ID_DETECTION"])).toEqual([]);
    expect(await detectImage(await rgb(sharp(Buffer.from(pageSvg({ x: 200, y: 100, width: 400, height: 420 })))), ["ID_DETECTION"])).toEqual([]);
  });

  it("heads include faces too small for the pose model", async () => {
    // sample1 shrunk to 192 px wide (faces ~25 px high) on a 1280x720 canvas.
    const small = await sharp(path.join(DEMO, "sample1.jpg")).rotate().resize(192).png().toBuffer();
    const img = await rgb(sharp({ create: { width: 1280, height: 720, channels: 3, background: "#7a8a7a" } }).composite([{ input: small, left: 700, top: 400 }]));
    const heads = (await detectImage(img, ["HEAD_DETECTION"])).filter((d) => d.type === "head");
    // The three hand-labelled faces of sample1 (1920 px wide), scaled by 0.1 and moved to (700, 400).
    const faces: Box[] = [
      { x: 400, y: 350, width: 220, height: 250 },
      { x: 820, y: 400, width: 220, height: 260 },
      { x: 1450, y: 200, width: 240, height: 270 },
    ].map((f) => ({ x: 700 + f.x * 0.1, y: 400 + f.y * 0.1, width: f.width * 0.1, height: f.height * 0.1 }));
    for (const f of faces) expect(heads.some((h) => coverage(f, h.box) > 0.9), JSON.stringify(heads)).toBe(true);
    expect(heads.length).toBeLessThanOrEqual(5);
  });
});
