/**
 * COCO objects (CenterNet) and heads (MoveNet keypoints): the pure decoding with exact cases, then
 * the real converted models on a sample photo shipped in @vladmandic/face-api (three people).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { decodeImageRgb } from "@/server/media";
import { decodeCenternet } from "@/server/vision/objects";
import { headFromKeypoints } from "@/server/vision/heads";
import { detectImage } from "@/server/vision/engine";

const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
/** Centres of the three faces in sample1.jpg (1920x1280), read off the picture. */
const FACES = [
  { x: 492, y: 480 },
  { x: 924, y: 540 },
  { x: 1572, y: 324 },
];

beforeAll(() => {
  process.env.OBSCURA_DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "obscura-objects-"));
  resetConfig();
});

describe("CenterNet decoding", () => {
  it("maps classes to types, scales to the image, drops others and low scores", () => {
    const rows = new Float32Array([
      // x1, y1, x2, y2 (512 px), score, class
      10, 20, 110, 220, 0.9, 0, // person
      0, 0, 256, 128, 0.8, 2, // car -> vehicle
      300, 300, 400, 380, 0.7, 62, // tv -> screen
      50, 50, 60, 60, 0.9, 16, // dog: not ours
      10, 20, 110, 220, 0.1, 73, // book, below threshold
    ]);
    const d = decodeCenternet(rows, 1024, 512, 0.3);
    expect(d.map((x) => [x.type, x.label])).toEqual([
      ["person", "person"],
      ["vehicle", "car"],
      ["screen", "tv"],
    ]);
    expect(d[0]!.box).toEqual({ x: 20, y: 20, width: 200, height: 200 });
  });
});

describe("heads from keypoints", () => {
  const kp = (x: number, y: number, score = 0.9) => ({ x, y, score });
  const none = kp(0, 0, 0);
  it("sits on the visible head keypoints and is sized by the ears", () => {
    const k = [kp(100, 100), kp(90, 90), kp(110, 90), kp(80, 95), kp(120, 95), kp(60, 160), kp(140, 160)];
    const b = headFromKeypoints(k)!;
    expect(b.width).toBeCloseTo(40 * 1.7, 5);
    expect(b.x + b.width / 2).toBeCloseTo(100, 5);
  });
  it("places a turned-away head above the shoulders", () => {
    const k = [none, none, none, none, none, kp(60, 200), kp(140, 200)];
    const b = headFromKeypoints(k)!;
    expect(b.x + b.width / 2).toBeCloseTo(100, 5);
    expect(b.y + b.height).toBeLessThan(200);
  });
  it("gives nothing without head or shoulder keypoints", () => {
    expect(headFromKeypoints([none, none, none, none, none, none, none])).toBeNull();
  });
});

describe("real models on a photo of three people", () => {
  it("finds the three people and their heads", async () => {
    const image = await decodeImageRgb(SAMPLE);
    const found = await detectImage(image, ["PERSON_DETECTION", "HEAD_DETECTION"], { faceBoxExpansionFactor: 1 });
    const inside = (p: { x: number; y: number }, b: { x: number; y: number; width: number; height: number }) =>
      p.x >= b.x && p.x <= b.x + b.width && p.y >= b.y && p.y <= b.y + b.height;
    for (const face of FACES) {
      expect(found.some((d) => d.type === "person" && inside(face, d.box)), `a person box around ${JSON.stringify(face)}`).toBe(true);
      expect(found.some((d) => d.type === "head" && inside(face, d.box)), `a head box around ${JSON.stringify(face)}`).toBe(true);
    }
    const heads = found.filter((d) => d.type === "head");
    expect(heads.length).toBeLessThanOrEqual(4);
    for (const h of heads) expect(h.box.width).toBeLessThan(image.width / 3);
  });
  it("finds nothing in an empty frame", async () => {
    const image = { data: new Uint8Array(640 * 480 * 3).fill(128), width: 640, height: 480 };
    const found = await detectImage(image, ["PERSON_DETECTION", "VEHICLE_DETECTION", "SCREEN_DETECTION", "DOCUMENT_DETECTION", "HEAD_DETECTION"]);
    expect(found).toEqual([]);
  });
});

describe("documents from dense text", () => {
  it("finds a page of text and not a lone line", async () => {
    const sharp = (await import("sharp")).default;
    const { pageSvg } = await import("./helpers/scenes");
    const paper = { x: 150, y: 80, width: 500, height: 440 };
    const { data, info } = await sharp(Buffer.from(pageSvg(paper))).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const image = { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
    const found = (await detectImage(image, ["DOCUMENT_DETECTION"])).filter((d) => d.type === "document");
    const { coverage } = await import("@/lib/geometry");
    const text = { x: paper.x + paper.width * 0.1, y: paper.y + paper.height * 0.15, width: paper.width * 0.5, height: paper.height * 0.6 };
    expect(found.some((d) => coverage(text, d.box) >= 0.7), JSON.stringify(found)).toBe(true);
    const { documentsFromText } = await import("@/server/vision/documents");
    const line = { box: { x: 10, y: 10, width: 200, height: 20 }, quad: [[10, 10], [210, 10], [210, 30], [10, 30]] as never, score: 0.9 };
    expect(documentsFromText([line], 800, 600, 0.1)).toEqual([]);
  });
});
