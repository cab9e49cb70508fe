/** `npm run eval` pieces: label parsers (WIDER bbx_gt, FDDB ellipses, plates-us), redaction metrics, the CLI on a fake detector. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import {
  detectLabelFormat,
  ellipseBounds,
  loadPlatesUs,
  parseFaceLabels,
  parseFddbEllipse,
  parsePlatesUs,
  parseWiderBbx,
  resolveImagePath,
} from "@/bench/eval/labels";
import { addCounts, addReading, editDistance, emptyCounts, emptyReading, evaluate, evaluateImage, matchGt, readingSummary, sizeBucket, summarize } from "@/bench/eval/metrics";
import { parseArgs, runEval, UsageError, type DetectImageFn } from "@/bench/eval";
import type { Detection } from "@/server/vision/types";

const WIDER = `0--Parade/0_Parade_marchingband_1_20.jpg
3
10 20 30 40 0 0 0 0 0 0
5 5 8 9 2 0 0 1 0 0
0 0 0 0 0 0 0 0 0 0
0--Parade/0_Parade_Parade_0_12.jpg
0
0 0 0 0 0 0 0 0 0 0
12_Group_Group_12_Group_Group_12_10.jpg
1
100 50 20 22 1 1 0 0 2 1
`;

const FDDB = `2002/08/11/big/img_591
1
123.583300 85.549500 1.265839 269.693400 161.781200  1
2002/08/26/big/img_265
2
10 5 0 100 50  1
10 5 1.5707963267948966 200 100  1
`;

describe("parseWiderBbx", () => {
  const m = parseWiderBbx(WIDER);
  it("reads names, counts and boxes; invalid boxes become ignore regions; placeholders are dropped", () => {
    expect([...m.keys()]).toEqual([
      "0--Parade/0_Parade_marchingband_1_20.jpg",
      "0--Parade/0_Parade_Parade_0_12.jpg",
      "12_Group_Group_12_Group_Group_12_10.jpg",
    ]);
    const a = m.get("0--Parade/0_Parade_marchingband_1_20.jpg")!;
    expect(a.map((b) => [b.box, b.ignore])).toEqual([
      [{ x: 10, y: 20, width: 30, height: 40 }, false],
      [{ x: 5, y: 5, width: 8, height: 9 }, true],
    ]);
    expect(a[1].attributes).toEqual({ blur: 2, expression: 0, illumination: 0, invalid: 1, occlusion: 0, pose: 0 });
    expect(m.get("0--Parade/0_Parade_Parade_0_12.jpg")).toEqual([]);
    expect(m.get("12_Group_Group_12_Group_Group_12_10.jpg")![0]).toEqual({
      box: { x: 100, y: 50, width: 20, height: 22 },
      ignore: false,
      attributes: { blur: 1, expression: 1, illumination: 0, invalid: 0, occlusion: 2, pose: 1 },
    });
  });
  it("accepts a 0 count without the dummy line, CRLF and a missing final newline", () => {
    const t = "a.jpg\r\n0\r\nb.jpg\r\n1\r\n1 2 3 4 0 0 0 0 0 0";
    const r = parseWiderBbx(t);
    expect(r.get("a.jpg")).toEqual([]);
    expect(r.get("b.jpg")!.map((b) => b.box)).toEqual([{ x: 1, y: 2, width: 3, height: 4 }]);
  });
  it("rejects a truncated entry", () => {
    expect(() => parseWiderBbx("a.jpg\n2\n1 2 3 4 0 0 0 0 0 0\n")).toThrow(/declares 2 boxes/);
    expect(() => parseWiderBbx("a.jpg\nb.jpg\n")).toThrow(/expected a face count/);
  });
});

describe("parseFddbEllipse", () => {
  it("turns each ellipse into its axis-aligned bounding box", () => {
    const m = parseFddbEllipse(FDDB);
    expect([...m.keys()]).toEqual(["2002/08/11/big/img_591", "2002/08/26/big/img_265"]);
    const [h, v] = m.get("2002/08/26/big/img_265")!;
    // angle 0: major axis along x
    expect(h).toEqual({ box: { x: 90, y: 45, width: 20, height: 10 }, ignore: false });
    // angle pi/2: major axis along y
    expect(v.box.x).toBeCloseTo(195, 9);
    expect(v.box.y).toBeCloseTo(90, 9);
    expect(v.box.width).toBeCloseTo(10, 9);
    expect(v.box.height).toBeCloseTo(20, 9);
    const [one] = m.get("2002/08/11/big/img_591")!;
    const b = ellipseBounds(123.5833, 85.5495, 1.265839, 269.6934, 161.7812);
    expect(one.box.width).toBeCloseTo(b.width, 3);
    expect(one.box.x + one.box.width / 2).toBeCloseTo(269.6934, 6);
    expect(one.box.y + one.box.height / 2).toBeCloseTo(161.7812, 6);
  });
  it("bounds a 45-degree ellipse symmetrically", () => {
    const b = ellipseBounds(10, 10, Math.PI / 4, 0, 0); // a circle
    expect(b.width).toBeCloseTo(20, 9);
    const e = ellipseBounds(20, 10, Math.PI / 4, 0, 0);
    expect(e.width).toBeCloseTo(Math.sqrt(2 * (400 + 100)), 9); // 2*sqrt((a^2+b^2)/2)
    expect(e.height).toBeCloseTo(e.width, 9);
  });
});

describe("detectLabelFormat", () => {
  it("tells WIDER from FDDB by the record lines", () => {
    expect(detectLabelFormat(WIDER)).toBe("wider");
    expect(detectLabelFormat(FDDB)).toBe("fddb");
    expect(detectLabelFormat("a.jpg\n0\n0 0 0 0 0 0 0 0 0 0\n")).toBe("wider");
    expect(parseFaceLabels(FDDB).format).toBe("fddb");
    expect(parseFaceLabels(WIDER).labels.size).toBe(3);
    expect(() => detectLabelFormat("hello\n")).toThrow(/no records/);
    expect(() => detectLabelFormat("a.jpg\n1\n1 2 3\n")).toThrow(/unrecognised/);
  });
});

describe("plates-us labels", () => {
  it("parses tab-separated lines with the plate string", () => {
    const m = parsePlatesUs("car1.jpg\t935\t362\t99\t49\tYG9X2G\ncar2.jpg\t1\t2\t3\t4\t\n");
    expect(m.get("car1.jpg")).toEqual([{ box: { x: 935, y: 362, width: 99, height: 49 }, ignore: false, text: "YG9X2G" }]);
    expect(m.get("car2.jpg")).toEqual([{ box: { x: 1, y: 2, width: 3, height: 4 }, ignore: false }]);
    expect(() => parsePlatesUs("car.jpg 1 2 3 4 ABC\n")).toThrow(/expected/);
  });
  it("loads a folder of label files and resolves image names", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eval-plates-"));
    fs.writeFileSync(path.join(dir, "b.txt"), "b.jpg\t5\t6\t7\t8\tXYZ1\n");
    fs.writeFileSync(path.join(dir, "a.txt"), "a.jpg\t1\t2\t3\t4\tABC123\n");
    fs.writeFileSync(path.join(dir, "a.jpg"), "");
    fs.writeFileSync(path.join(dir, "README.md"), "# not labels\n");
    const m = await loadPlatesUs(dir);
    expect([...m.keys()]).toEqual(["a.jpg", "b.jpg"]);
    expect(m.get("b.jpg")![0].text).toBe("XYZ1");
    expect(resolveImagePath(dir, "a.jpg")).toBe(path.join(dir, "a.jpg"));
    expect(resolveImagePath(dir, "0--Parade/a.jpg")).toBe(path.join(dir, "a.jpg")); // flattened event folder
    expect(resolveImagePath(dir, "a")).toBe(path.join(dir, "a.jpg")); // FDDB names have no extension
    expect(resolveImagePath(dir, "b.jpg")).toBeNull();
  });
});

const box = (x: number, y: number, width: number, height: number) => ({ x, y, width, height });
const face = (b: ReturnType<typeof box>, score = 0.9): Detection => ({ type: "face", score, box: b });

describe("metrics", () => {
  it("buckets by gt height", () => {
    expect([100, 40, 39.9, 20, 19, 10, 9.99, 0].map(sizeBucket)).toEqual([">=40", ">=40", "20-40", "20-40", "10-20", "10-20", "<10", "<10"]);
  });

  it("found = one box covers >= 70% of the gt; best IoU among those", () => {
    const gt = box(0, 0, 10, 10);
    expect(matchGt(gt, [box(0, 0, 7, 10)])).toEqual({ found: true, iou: 0.7 });
    expect(matchGt(gt, [box(0, 0, 6.9, 10)]).found).toBe(false);
    // two boxes covering 50% each do not add up
    expect(matchGt(gt, [box(0, 0, 5, 10), box(5, 0, 5, 10)]).found).toBe(false);
    // best IoU among covering boxes: 100/400 vs 100/100
    expect(matchGt(gt, [box(-5, -5, 20, 20), box(0, 0, 10, 10), box(0, 0, 5, 5)])).toEqual({ found: true, iou: 1 });
    expect(matchGt(gt, [box(0, 0, 10, 10)], 1).found).toBe(true);
  });

  it("counts one image exactly", () => {
    const gts = [
      { box: box(0, 0, 50, 50) }, // >=40, found by d1 (IoU 1)
      { box: box(100, 0, 30, 30) }, // 20-40, found by d2 (covers 100%, IoU 900/1600)
      { box: box(200, 0, 15, 15) }, // 10-20, not found (d3 covers 1/3)
      { box: box(300, 0, 5, 5) }, // <10, found by d4 (IoU 25/100), outside overall recall
      { box: box(400, 0, 30, 30), ignore: true }, // ignored; d5 touches it: not a false box
    ];
    const dets = [
      face(box(0, 0, 50, 50)),
      face(box(95, -5, 40, 40)),
      face(box(200, 0, 5, 15)),
      face(box(300, 0, 10, 10)),
      face(box(410, 10, 50, 50)),
      face(box(600, 600, 10, 10)), // touches nothing
      face(box(50, 0, 10, 10)), // shares only an edge with gt 1: touches nothing
    ];
    const c = evaluateImage(gts, dets);
    expect(c).toMatchObject({ images: 1, gt: 3, found: 2, ignored: 1, detections: 7, touching: 5, falseBoxes: 2, imagesWithGt: 1, iouCount: 3 });
    expect(c.bySize).toEqual({
      ">=40": { gt: 1, found: 1 },
      "20-40": { gt: 1, found: 1 },
      "10-20": { gt: 1, found: 0 },
      "<10": { gt: 1, found: 1 },
    });
    expect(c.iouSum).toBeCloseTo(1 + 900 / 1600 + 25 / 100, 12);
    expect(c.imageRecallSum).toBeCloseTo(2 / 3, 12);

    const s = summarize(c);
    expect(s.recall).toBeCloseTo(2 / 3, 12);
    expect(s.precision).toBeCloseTo(5 / 7, 12);
    expect(s.falseBoxesPerImage).toBe(2);
    expect(s.boxesPerImage).toBe(7);
    expect(s.meanIou).toBeCloseTo((1 + 0.5625 + 0.25) / 3, 12);
    expect(s.recallBySize["10-20"]).toEqual({ gt: 1, found: 0, recall: 0 });
    expect(s.recallBySize["<10"].recall).toBe(1);
  });

  it("minHeight and minCoverage options", () => {
    const gts = [{ box: box(0, 0, 5, 5) }, { box: box(10, 10, 20, 20) }];
    const dets = [box(0, 0, 5, 4)]; // Box[] works as well as Detection[]; covers 80% of gt 1
    expect(evaluateImage(gts, dets, { minHeight: 0 })).toMatchObject({ gt: 2, found: 1 });
    expect(evaluateImage(gts, dets, { minHeight: 0, minCoverage: 0.9 })).toMatchObject({ gt: 2, found: 0 });
    expect(evaluateImage(gts, dets)).toMatchObject({ gt: 1, found: 0 });
  });

  it("sums images; empty cases give null ratios", () => {
    const empty = summarize(emptyCounts());
    expect(empty).toMatchObject({ recall: null, precision: null, meanIou: null, falseBoxesPerImage: null, meanImageRecall: null });
    const a = evaluateImage([{ box: box(0, 0, 20, 20) }], [box(0, 0, 20, 20)]); // 1/1, no false box
    const b = evaluateImage(
      [{ box: box(0, 0, 20, 20) }, { box: box(50, 50, 20, 20) }, { box: box(90, 90, 20, 20) }],
      [box(200, 200, 5, 5), box(300, 300, 5, 5)],
    ); // 0/3, 2 false boxes
    const c = evaluateImage([], [box(0, 0, 5, 5)]); // no gt: 1 false box, not in meanImageRecall
    const s = summarize(addCounts(addCounts(a, b), c));
    expect(s).toMatchObject({ images: 3, gt: 4, found: 1, detections: 4, recall: 0.25, precision: 0.25, falseBoxesPerImage: 1, meanIou: 1 });
    expect(s.meanImageRecall).toBe(0.5); // (1 + 0) / 2
    expect(s.boxesPerImage).toBeCloseTo(4 / 3, 12);
    expect(
      evaluate([
        { gt: [{ box: box(0, 0, 20, 20) }], detections: [box(0, 0, 20, 20)] },
        { gt: [{ box: box(0, 0, 20, 20) }], detections: [] },
      ]),
    ).toMatchObject({ recall: 0.5, precision: 1, falseBoxesPerImage: 0 });
  });
});

describe("eval CLI", () => {
  it("parses arguments", () => {
    const a = parseArgs(["faces", "--images", "imgs", "--labels=l.txt", "--every", "3", "--limit", "5", "--threshold", "0.3", "--expand", "1.5", "--per-image"]);
    expect(a).toMatchObject({ task: "faces", images: "imgs", labels: "l.txt", every: 3, limit: 5, minCoverage: 0.7, minHeight: 10, perImage: true });
    expect(a.settings).toEqual({ objectsConfidenceThreshold: 0.3, faceBoxExpansionFactor: 1.5 });
    expect(parseArgs(["plates", "--dir", "d"])).toMatchObject({ task: "plates", dir: "d", every: 1, settings: {} });
    expect(() => parseArgs(["faces", "--images", "x"])).toThrow(UsageError);
    expect(() => parseArgs(["cars"])).toThrow(UsageError);
    expect(() => parseArgs(["plates", "--dir", "d", "--every", "0"])).toThrow(/positive integer/);
    expect(() => parseArgs(["plates", "--dir", "d", "--bogus", "1"])).toThrow(/unknown option/);
  });

  it("runs end to end on a fake detector", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eval-faces-"));
    for (const n of ["a", "b", "c"]) {
      await sharp({ create: { width: 64, height: 48, channels: 4, background: "#808080" } }).png().toFile(path.join(dir, `${n}.png`));
    }
    const labels = "ev/a.png\n1\n0 0 20 20 0 0 0 0 0 0\nev/b.png\n1\n30 20 20 20 0 0 0 0 0 0\nev/c.png\n1\n0 0 20 20 0 0 0 0 0 0\nev/gone.png\n0\n";
    fs.writeFileSync(path.join(dir, "labels.txt"), labels);
    const calls: Array<{ w: number; h: number; bytes: number; features: string[]; settings: unknown }> = [];
    const fake: DetectImageFn = async (image, features, settings) => {
      calls.push({ w: image.width, h: image.height, bytes: image.data.length, features, settings });
      return [
        { type: "face", score: 0.9, box: box(0, 0, 20, 20) },
        { type: "person", score: 0.9, box: box(40, 30, 10, 10) }, // other types are not scored
      ];
    };
    const out = path.join(dir, "out", "r.json");
    const logs: string[] = [];
    const args = parseArgs(["faces", "--images", dir, "--labels", path.join(dir, "labels.txt"), "--json", out, "--threshold", "0.4", "--per-image"]);
    const r = await runEval(args, { detectImage: fake, log: (l) => logs.push(l) });
    expect(calls).toHaveLength(3);
    expect(calls[0]).toEqual({ w: 64, h: 48, bytes: 64 * 48 * 3, features: ["FACE_DETECTION"], settings: { objectsConfidenceThreshold: 0.4 } });
    expect(r).toMatchObject({ task: "faces", objectType: "face", images: 3, labelledImages: 4, gt: 3, found: 2, recall: 0.6667, precision: 0.6667, falseBoxesPerImage: 0.333 });
    expect(r.dataset.format).toBe("wider-bbx-gt");
    expect(r.missingImages).toEqual(["ev/gone.png"]);
    expect(r.perImage!.map((p) => [p.image, p.found])).toEqual([["ev/a.png", 1], ["ev/b.png", 0], ["ev/c.png", 1]]);
    expect(logs.some((l) => l.startsWith("[eval] 3/4 recall 66.7% (2/3)"))).toBe(true);
    expect(JSON.parse(fs.readFileSync(out, "utf8"))).toMatchObject({ recall: 0.6667, settings: { objectsConfidenceThreshold: 0.4 } });

    const every = await runEval(parseArgs(["faces", "--images", dir, "--labels", path.join(dir, "labels.txt"), "--every", "2", "--limit", "1"]), {
      detectImage: fake,
      log: () => {},
    });
    expect(every).toMatchObject({ images: 1, gt: 1, found: 1 });
  });
});

describe("plate string metrics", () => {
  it("counts exact strings and character accuracy by edit distance", () => {
    expect(editDistance("KC44Z3X", "KC4Z3X")).toBe(1);
    expect(editDistance("", "ABC")).toBe(3);
    expect(editDistance("OSC719", "0SG719")).toBe(2);
    let c = emptyReading();
    c = addReading(c, "7KQP284", "7KQP284");
    c = addReading(c, "7KQ", "7KQP284"); // 4 missing: 3 of 7 right
    c = addReading(c, "", "AB");
    const s = readingSummary(c);
    expect(s.plates).toBe(3);
    expect(s.exactAccuracy).toBeCloseTo(1 / 3);
    expect(s.charAccuracy).toBeCloseTo((7 + 3 + 0) / 16);
    expect(readingSummary(emptyReading())).toEqual({ plates: 0, exactAccuracy: null, charAccuracy: null });
  });
});
