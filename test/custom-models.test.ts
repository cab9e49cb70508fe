/**
 * Custom ONNX detectors (OBSCURA_MODELS_DIR manifests, server/vision/custom.ts): the output
 * decoders and the pre-processing on hand-made tensors, then the real converted CenterNet model
 * declared through a manifest and run by the engine (replace, add, bad manifests).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { iou } from "@/lib/geometry";
import { resetConfig } from "@/server/config";
import { decodeImageRgb } from "@/server/media";
import {
  CustomDetector,
  customModelErrors,
  decodeDetections,
  decodeSsd,
  decodeYolov5,
  decodeYolov8,
  fitImage,
  inputData,
  readOnnxIo,
  toDetections,
  type DecodeOptions,
  type Manifest,
} from "@/server/vision/custom";
import { FEATURE_TYPES, detectImage, featureSupport, resetDetectors } from "@/server/vision/engine";
import { OnnxGraph } from "@/server/vision/convert/onnx-graph";
import { ensureModel } from "@/server/vision/models";
import { CocoDetector } from "@/server/vision/objects";
import { session } from "@/server/vision/onnx";
import type { Detection } from "@/server/vision/types";

const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
/** Centres of the three faces in sample1.jpg (1920x1280), read off the picture (as in objects.test.ts). */
const FACES = [
  { x: 492, y: 480 },
  { x: 924, y: 540 },
  { x: 1572, y: 324 },
];
const inside = (p: { x: number; y: number }, b: Detection["box"]) => p.x >= b.x && p.x <= b.x + b.width && p.y >= b.y && p.y <= b.y + b.height;
const LOAD = { reserved: ["coco-centernet"], featureTypes: FEATURE_TYPES };

const opts = (o: Partial<DecodeOptions> = {}): DecodeOptions => ({ threshold: 0.3, classes: [0, 2], normalized: false, inputWidth: 640, inputHeight: 640, ...o });

describe("decoders", () => {
  // Three boxes, classes 0..2 (class 1 is not mapped): cx, cy, w, h then the class scores.
  const rows = [
    [100, 100, 20, 40, 0.9, 0.0, 0.1], // class 0
    [300, 200, 50, 50, 0.1, 0.95, 0.2], // best is class 1 (unmapped): class 2 at 0.2 is below 0.3
    [500, 400, 60, 30, 0.05, 0.5, 0.6], // class 2
  ];
  it("yolov8: [1, 4+C, N] and the transposed [1, N, 4+C] give the best mapped class per box", () => {
    const n = rows.length;
    const a = 4 + 3;
    const chw = new Float32Array(a * n);
    for (let i = 0; i < n; i++) for (let k = 0; k < a; k++) chw[k * n + i] = rows[i]![k]!;
    const expected = [
      { cls: 0, score: expect.closeTo(0.9, 6), x1: 90, y1: 80, x2: 110, y2: 120 },
      { cls: 2, score: expect.closeTo(0.6, 6), x1: 470, y1: 385, x2: 530, y2: 415 },
    ];
    // Three boxes are fewer than 4 + 3 values per box: the layout has to be stated.
    expect(decodeYolov8({ data: chw, dims: [1, a, n] }, opts({ transposed: false }))).toEqual(expected);
    expect(decodeYolov8({ data: new Float32Array(rows.flat()), dims: [1, n, a] }, opts({ transposed: true }))).toEqual(expected);
    // As real heads have it (N = 8,400 at 640x640 > 4 + C), the larger dim is N: padded to 20 boxes, no flag.
    const N = 20;
    const padded = new Float32Array(a * N);
    for (let i = 0; i < n; i++) for (let k = 0; k < a; k++) padded[k * N + i] = rows[i]![k]!;
    expect(decodeYolov8({ data: padded, dims: [1, a, N] }, opts())).toEqual(expected);
    const paddedT = new Float32Array(a * N);
    paddedT.set(rows.flat());
    expect(decodeYolov8({ data: paddedT, dims: [1, N, a] }, opts())).toEqual(expected);
    // Normalised boxes are scaled by the input size.
    const norm = rows.map((r) => [r[0]! / 640, r[1]! / 640, r[2]! / 640, r[3]! / 640, ...r.slice(4)]);
    const d = decodeYolov8({ data: new Float32Array(norm.flat()), dims: [1, n, a] }, opts({ normalized: true, transposed: true }));
    expect(d[1]!.x1).toBeCloseTo(470, 3);
    expect(() => decodeYolov8({ data: padded, dims: [1, a, N] }, opts({ classes: [0, 3] }))).toThrow(/has 3 classes, but class 3 is mapped/);
  });
  it("yolov5: score = objectness x class score", () => {
    const t = [
      [100, 100, 20, 40, 0.8, 0.5, 0.5, 0.0], // 0.8 * 0.5 = 0.4 for class 0
      [300, 300, 10, 10, 0.2, 1.0, 0.0, 0.0], // objectness below the threshold
      [50, 60, 10, 20, 0.9, 0.1, 0.0, 0.9], // class 2: 0.81
    ];
    const d = decodeYolov5({ data: new Float32Array(t.flat()), dims: [1, 3, 8] }, opts());
    expect(d.map((c) => [c.cls, +c.score.toFixed(4), c.x1, c.y1, c.x2, c.y2])).toEqual([
      [0, 0.4, 90, 80, 110, 120],
      [2, 0.81, 45, 50, 55, 70],
    ]);
  });
  it("detections: [1, N, 6] x1, y1, x2, y2, score, class", () => {
    const t = [
      [10, 20, 30, 40, 0.9, 0],
      [10, 20, 30, 40, 0.9, 1], // unmapped
      [50, 60, 70, 80, 0.2, 2], // below the threshold
      [1, 2, 3, 4, 0.5, 2],
    ];
    const d = decodeDetections({ data: new Float32Array(t.flat()), dims: [1, 4, 6] }, opts());
    expect(d.map((c) => [c.cls, c.x1, c.y1, c.x2, c.y2])).toEqual([
      [0, 10, 20, 30, 40],
      [2, 1, 2, 3, 4],
    ]);
    expect(() => decodeDetections({ data: new Float32Array(7), dims: [1, 1, 7] }, opts())).toThrow(/must be \[1, N, 6\]/);
  });
  it("ssd: normalised yxyx or xyxy boxes with [1, N, C] scores, or scores and class ids", () => {
    const boxes = { data: new Float32Array([0.1, 0.2, 0.3, 0.4, 0.5, 0.5, 0.6, 0.7]), dims: [1, 2, 4] };
    // Class 0 is the background here and not mapped; class 1 is.
    const scores = { data: new Float32Array([0.1, 0.9, 0.8, 0.2]), dims: [1, 2, 2] };
    const o = { ...opts({ classes: [1], normalized: true, inputWidth: 100, inputHeight: 200 }) };
    const yx = decodeSsd(boxes, scores, null, { ...o, boxFormat: "yxyx" });
    expect(yx).toHaveLength(1);
    expect([yx[0]!.cls, yx[0]!.x1, yx[0]!.y1, yx[0]!.x2, yx[0]!.y2].map((v) => +v.toFixed(3))).toEqual([1, 20, 20, 40, 60]);
    const xy = decodeSsd(boxes, scores, null, { ...o, boxFormat: "xyxy" });
    expect([xy[0]!.x1, xy[0]!.y1, xy[0]!.x2, xy[0]!.y2].map((v) => +v.toFixed(3))).toEqual([10, 40, 30, 80]);
    const ids = decodeSsd(boxes, { data: new Float32Array([0.7, 0.9]), dims: [1, 2] }, { data: new Float32Array([1, 5]), dims: [1, 2] }, { ...o, boxFormat: "yxyx" });
    expect(ids.map((c) => [c.cls, +c.score.toFixed(3)])).toEqual([[1, 0.7]]);
    // One-class scores [1, N]: class 0.
    const one = decodeSsd(boxes, { data: new Float32Array([0.2, 0.6]), dims: [1, 2] }, null, { ...o, classes: [0], boxFormat: "yxyx" });
    expect(one.map((c) => +c.y1.toFixed(3))).toEqual([100]);
  });
});

describe("pre-processing and mapping back", () => {
  it("letterboxes into the input and maps boxes back to image pixels", () => {
    const fit = fitImage(1000, 500, 640, 640, "letterbox");
    expect(fit).toEqual({ width: 640, height: 320, padX: 0, padY: 160, scaleX: 1000 / 640, scaleY: 500 / 320 });
    const classes = new Map([[0, { type: "face" as const, label: "face" }]]);
    const d = toDetections([{ cls: 0, score: 0.9, x1: 64, y1: 160 + 32, x2: 128, y2: 160 + 64 }], classes, fit, 1000, 500, 0.5);
    expect(d).toEqual([{ type: "face", score: 0.9, label: "face", box: { x: 100, y: 50, width: 100, height: 50 } }]);
    const st = fitImage(1000, 500, 640, 640, "stretch");
    const s = toDetections([{ cls: 0, score: 0.9, x1: 64, y1: 64, x2: 128, y2: 128 }], classes, st, 1000, 500, 0.5);
    expect(s[0]!.box).toEqual({ x: 100, y: 50, width: 100, height: 50 });
  });
  it("clips, drops empty boxes and unmapped classes, suppresses overlaps per type", () => {
    const fit = fitImage(100, 100, 100, 100, "stretch");
    const classes = new Map([
      [0, { type: "person" as const }],
      [1, { type: "person" as const }],
      [2, { type: "vehicle" as const }],
    ]);
    const d = toDetections(
      [
        { cls: 0, score: 0.9, x1: -10, y1: -10, x2: 50, y2: 50 },
        { cls: 1, score: 0.8, x1: -8, y1: -8, x2: 50, y2: 52 }, // same object, other class of the same type
        { cls: 2, score: 0.7, x1: 0, y1: 0, x2: 50, y2: 50 }, // another type: kept
        { cls: 0, score: 0.9, x1: 120, y1: 0, x2: 150, y2: 50 }, // outside the image
        { cls: 7, score: 0.9, x1: 0, y1: 0, x2: 10, y2: 10 }, // unmapped
      ],
      classes,
      fit,
      100,
      100,
      0.5,
    );
    expect(d.map((x) => [x.type, x.score, x.box])).toEqual([
      ["person", 0.9, { x: 0, y: 0, width: 50, height: 50 }],
      ["vehicle", 0.7, { x: 0, y: 0, width: 50, height: 50 }],
    ]);
  });
  it("lays out NCHW/NHWC, RGB/BGR, range, mean, std and the letterbox padding", () => {
    // A 2x1 image (red, blue) letterboxed into 2x2: one row of padding above (pad rows floor((2-1)/2) = 0 -> below).
    const rgb = new Uint8Array([255, 0, 0, 0, 0, 255]);
    const fit = fitImage(2, 1, 2, 2, "letterbox");
    expect(fit).toMatchObject({ width: 2, height: 1, padX: 0, padY: 0 });
    const spec = { width: 2, height: 2, layout: "NCHW", channels: "RGB", dtype: "float32", range: [0, 1], mean: [0, 0, 0], std: [1, 1, 1], resize: "letterbox", padValue: 0 } satisfies Manifest["input"];
    // NCHW: channel planes of 4 values, pixel rows [red, blue] then padding.
    expect([...inputData(rgb, fit, spec)]).toEqual([1, 0, 0, 0, /* G */ 0, 0, 0, 0, /* B */ 0, 1, 0, 0]);
    expect([...inputData(rgb, fit, { ...spec, channels: "BGR" })]).toEqual([0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
    const nhwc = inputData(rgb, fit, { ...spec, layout: "NHWC", range: [0, 255], mean: [127.5, 127.5, 127.5], std: [127.5, 127.5, 127.5], padValue: 255 });
    expect([...nhwc]).toEqual([1, -1, -1, -1, -1, 1, 1, 1, 1, 1, 1, 1]);
    expect([...inputData(rgb, fit, { ...spec, dtype: "uint8", range: [0, 255], padValue: 114 })]).toEqual([255, 0, 114, 114, 0, 0, 114, 114, 0, 255, 114, 114]);
  });
});

// ---------------------------------------------------------------------------------------------
// The real model

let centernet = "";
let modelsDir = "";

/** A fresh OBSCURA_MODELS_DIR holding the converted CenterNet and these manifests. */
function useModels(manifests: Record<string, unknown>): void {
  modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), "obscura-custom-models-"));
  fs.copyFileSync(centernet, path.join(modelsDir, "centernet.onnx"));
  for (const [file, m] of Object.entries(manifests)) fs.writeFileSync(path.join(modelsDir, file), typeof m === "string" ? m : JSON.stringify(m, null, 2));
  process.env.OBSCURA_MODELS_DIR = modelsDir;
  resetConfig();
  resetDetectors();
}

/** The CenterNet example of docs/models.md. */
const CENTERNET = {
  name: "my-centernet",
  model: "centernet.onnx",
  features: ["PERSON_DETECTION"],
  mode: "replace",
  input: { name: "tower_0/images", width: 512, height: 512, layout: "NHWC", channels: "RGB", range: [0, 255], resize: "stretch" },
  output: { format: "detections", name: "detections" },
  classes: { "0": { type: "person", label: "custom-person" } },
};

beforeAll(async () => {
  process.env.OBSCURA_DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "obscura-custom-"));
  resetConfig();
  centernet = await ensureModel("centernet");
});

afterEach(() => {
  vi.restoreAllMocks();
  delete process.env.OBSCURA_MODELS_DIR;
  resetConfig();
  resetDetectors();
});

describe("ONNX graph inputs and outputs", () => {
  it("reads the same names, types and shapes from the file as the session reports", async () => {
    const io = readOnnxIo(centernet);
    const s = await session(centernet);
    const meta = (xs: typeof s.inputMetadata) => xs.map((x) => ({ name: x.name, type: x.isTensor ? x.type : "?", shape: x.isTensor ? [...x.shape] : null }));
    expect(io).toEqual({ inputs: meta(s.inputMetadata), outputs: meta(s.outputMetadata) });
    expect(io.outputs.find((o) => o.name === "detections")!.shape).toEqual([1, 100, 6]);
  });
});

describe("a custom model from OBSCURA_MODELS_DIR", () => {
  it("replace: finds the three people with sensible boxes, and the built-in detector does not run", async () => {
    useModels({ "centernet.json": CENTERNET });
    expect(customModelErrors(LOAD)).toEqual([]);
    expect(featureSupport(["PERSON_DETECTION"])).toEqual({ supported: ["PERSON_DETECTION"], missing: [], detectors: ["my-centernet"] });
    const builtIn = vi.spyOn(CocoDetector.prototype, "detect");
    const custom = vi.spyOn(CustomDetector.prototype, "detect");
    const image = await decodeImageRgb(SAMPLE);
    const found = await detectImage(image, ["PERSON_DETECTION"]);
    expect(builtIn).not.toHaveBeenCalled();
    expect(custom).toHaveBeenCalledTimes(1);
    const people = found.filter((d) => d.type === "person");
    expect(people).toHaveLength(3);
    for (const face of FACES) {
      const p = people.find((d) => inside(face, d.box));
      expect(p, `a person box around ${JSON.stringify(face)}: ${JSON.stringify(people)}`).toBeDefined();
      expect(p!.label).toBe("custom-person");
      // A standing person seen from the waist up: taller than wide, well inside the 1920x1280 frame.
      expect(p!.box.height).toBeGreaterThan(p!.box.width);
      expect(p!.box.width).toBeGreaterThan(200);
      expect(p!.box.width).toBeLessThan(900);
    }
  });

  it("replace takes only the replaced feature from a built-in serving several", async () => {
    useModels({ "centernet.json": { ...CENTERNET, input: { ...CENTERNET.input, resize: "letterbox" } } });
    expect(featureSupport(["PERSON_DETECTION", "VEHICLE_DETECTION"]).detectors).toEqual(["coco-centernet", "my-centernet"]);
    const builtIn = vi.spyOn(CocoDetector.prototype, "detect");
    const image = await decodeImageRgb(SAMPLE);
    const found = await detectImage(image, ["PERSON_DETECTION", "VEHICLE_DETECTION"]);
    expect(builtIn).toHaveBeenCalledTimes(1); // still runs for vehicles
    const people = found.filter((d) => d.type === "person");
    expect(people.length).toBeGreaterThanOrEqual(3);
    expect(people.every((d) => d.label === "custom-person"), JSON.stringify(people)).toBe(true);
    // Letterboxed input, boxes mapped back: still around each face.
    for (const face of FACES) expect(people.some((d) => inside(face, d.box))).toBe(true);
  });

  it("add: runs beside the built-in detector and the engine merges the boxes of one person", async () => {
    const image = await decodeImageRgb(SAMPLE);
    const alone = (await detectImage(image, ["PERSON_DETECTION"])).filter((d) => d.type === "person");
    useModels({ "centernet.json": { ...CENTERNET, mode: "add", input: { ...CENTERNET.input, resize: "letterbox" } } });
    expect(featureSupport(["PERSON_DETECTION"]).detectors).toEqual(["coco-centernet", "my-centernet"]);
    const builtIn = vi.spyOn(CocoDetector.prototype, "detect");
    const custom = vi.spyOn(CustomDetector.prototype, "detect");
    const merged = (await detectImage(image, ["PERSON_DETECTION"])).filter((d) => d.type === "person");
    expect(builtIn).toHaveBeenCalledTimes(1);
    expect(custom).toHaveBeenCalledTimes(1);
    const own = (await custom.mock.results[0]!.value) as Detection[];
    expect(own.length).toBeGreaterThanOrEqual(3);
    // One box per person, not two: each person of the built-in alone matches one merged box.
    expect(merged).toHaveLength(alone.length);
    for (const a of alone) expect(merged.filter((m) => iou(a.box, m.box) > 0.6)).toHaveLength(1);
  });

  it("reports bad manifests with the file, field, value and what is allowed, and skips them", async () => {
    useModels({
      "a-good.json": { ...CENTERNET, mode: "add" },
      "feature.json": { ...CENTERNET, name: "feature", features: ["FACE"] },
      "missing.json": { ...CENTERNET, name: "missing", model: "nope.onnx" },
      "output.json": { ...CENTERNET, name: "output", output: { format: "detections", name: "dets" } },
      "type.json": { ...CENTERNET, name: "type", input: { ...CENTERNET.input, width: "512" } },
      "class.json": { ...CENTERNET, name: "class", classes: { "0": "cat" } },
      "shape.json": { ...CENTERNET, name: "shape", input: { ...CENTERNET.input, layout: "NCHW" } },
      "json.json": "{ not json",
      "notes.txt": "not a manifest",
    });
    const errors = customModelErrors(LOAD).map((e) => e.message);
    expect(errors).toHaveLength(7);
    const msg = (file: string) => errors.find((e) => e.startsWith(`custom model manifest ${file}:`));
    expect(msg("feature.json")).toMatch(/features\[0\]: must be one of PERSON_DETECTION, .*DOCUMENT_DETECTION \(got "FACE"\)/);
    expect(msg("missing.json")).toMatch(/model: "nope.onnx" is not a file/);
    expect(msg("output.json")).toBe('custom model manifest output.json: output.name: "dets" is not an output of the model; its outputs: "heatmap", "box_distances", "detections"');
    expect(msg("type.json")).toMatch(/input.width: must be an integer number of pixels \(8-8192\) \(got "512"\)/);
    expect(msg("class.json")).toMatch(/classes.0.type: must be one of face, head, person, vehicle, .* \(got "cat"\)/);
    expect(msg("shape.json")).toMatch(/input.layout: is NCHW, but input "tower_0\/images" of the model has shape \[1, 512, 512, 3\]/);
    expect(msg("json.json")).toMatch(/\(manifest\): is not valid JSON/);
    expect(customModelErrors(LOAD)[0]!.details.length).toBeGreaterThan(0);
    // Only the good one is installed, and it works.
    expect(featureSupport(["PERSON_DETECTION"]).detectors).toEqual(["coco-centernet", "my-centernet"]);
    const found = await detectImage(await decodeImageRgb(SAMPLE), ["PERSON_DETECTION"]);
    expect(found.filter((d) => d.type === "person").length).toBeGreaterThanOrEqual(3);
  });

  it("rejects duplicate and built-in names, classes outside the features, and features without classes", () => {
    useModels({
      "a.json": CENTERNET,
      "b.json": CENTERNET,
      "c.json": { ...CENTERNET, name: "coco-centernet" },
      "d.json": { ...CENTERNET, name: "d", classes: { "0": "person", "2": "vehicle" } },
      "e.json": { ...CENTERNET, name: "e", features: ["PERSON_DETECTION", "FACE_DETECTION"] },
    });
    const errors = customModelErrors(LOAD).map((e) => e.message);
    expect(errors).toEqual([
      'custom model manifest b.json: name: "my-centernet" is already used by a.json; names must be unique',
      'custom model manifest c.json: name: "coco-centernet" is the name of a built-in detector; choose another',
      'custom model manifest d.json: classes.2.type: belongs to VEHICLE_DETECTION, which is not in features [PERSON_DETECTION]: add it there or remove the class (got "vehicle")',
      'custom model manifest e.json: features[1]: no class is mapped to face, so the model cannot serve it (got "FACE_DETECTION")',
    ]);
  });

  it("yolov8, NCHW, 0..1, letterbox, RGB/BGR: a real tiny ONNX 'red square' detector built here", async () => {
    // images [1,3,64,64] -> per 16x16 cell the mean of (channel 0 - channel 2) as the class-0 score,
    // boxes = the cells (cx, cy, w, h in input pixels): output0 [1, 5, 16] as YOLOv8 heads give it.
    const g = new OnnxGraph();
    const x = g.addInput("images", "float32", [1, 3, 64, 64]);
    const plane = { dtype: "float32" as const, shape: [1, 1, 64, 64] };
    const ch = (c: number) => g.op1("Slice", [x, g.int64([c]), g.int64([c + 1]), g.int64([1])], {}, plane, `ch${c}`);
    const diff = g.op1("Sub", [ch(0), ch(2)], {}, plane, "diff");
    const cells = g.op1("AveragePool", [diff], { kernel_shape: { ints: [16, 16] }, strides: { ints: [16, 16] } }, { dtype: "float32", shape: [1, 1, 4, 4] }, "cells");
    const scores = g.op1("Reshape", [cells, g.int64([1, 1, 16])], {}, { dtype: "float32", shape: [1, 1, 16] }, "scores");
    const boxes = new Float32Array(4 * 16);
    for (let k = 0; k < 16; k++) [boxes[k], boxes[16 + k], boxes[32 + k], boxes[48 + k]] = [(k % 4) * 16 + 8, Math.floor(k / 4) * 16 + 8, 16, 16];
    const out = g.op1("Concat", [g.constant("float32", [1, 4, 16], boxes), scores], { axis: { i: 1 } }, { dtype: "float32", shape: [1, 5, 16] }, "concat");
    g.addOutput("output0", out);
    const manifest = {
      name: "red-squares",
      model: "red.onnx",
      features: ["LICENSE_PLATE_DETECTION"],
      mode: "replace",
      input: { width: 64, height: 64 }, // defaults: NCHW, RGB, 0..1, letterbox
      output: { format: "yolov8" },
      classes: { "0": { type: "licensePlate", label: "red square" } },
    };
    useModels({ "red.json": manifest, "blue.json": { ...manifest, name: "blue-squares", features: ["ID_DETECTION"], input: { ...manifest.input, channels: "BGR" }, classes: { "0": "id" } } });
    fs.writeFileSync(path.join(modelsDir, "red.onnx"), g.encode({ producer: "test", doc: "", props: {} }));
    expect(readOnnxIo(path.join(modelsDir, "red.onnx"))).toEqual({
      inputs: [{ name: "images", type: "float32", shape: [1, 3, 64, 64] }],
      outputs: [{ name: "output0", type: "float32", shape: [1, 5, 16] }],
    });
    expect(customModelErrors(LOAD)).toEqual([]);
    expect(featureSupport(["LICENSE_PLATE_DETECTION", "ID_DETECTION"]).detectors).toEqual(["blue-squares", "red-squares"]); // manifests load in file name order
    // 256x128 grey with a red square at x 64-128, y 0-64 and a blue one at x 192-256, y 64-128.
    // Letterboxed to 64x32 at y 16 of the 64x64 input, each square is exactly one 16x16 cell.
    const w = 256;
    const h = 128;
    const data = new Uint8Array(w * h * 3).fill(128);
    const paint = (x0: number, y0: number, rgb: number[]) => {
      for (let y = y0; y < y0 + 64; y++) for (let x = x0; x < x0 + 64; x++) data.set(rgb, (y * w + x) * 3);
    };
    paint(64, 0, [255, 0, 0]);
    paint(192, 64, [0, 0, 255]);
    const found = await detectImage({ data, width: w, height: h }, ["LICENSE_PLATE_DETECTION", "ID_DETECTION"]);
    const round = (d: Detection) => ({ type: d.type, label: d.label, score: +d.score.toFixed(1), box: { x: Math.round(d.box.x), y: Math.round(d.box.y), width: Math.round(d.box.width), height: Math.round(d.box.height) } });
    expect(found.map(round)).toEqual([
      { type: "id", label: undefined, score: 1, box: { x: 192, y: 64, width: 64, height: 64 } },
      { type: "licensePlate", label: "red square", score: 1, box: { x: 64, y: 0, width: 64, height: 64 } },
    ]);
  });

  it("drops a model onnxruntime cannot load, with a clear error, and the built-in takes over again", async () => {
    // A well-formed ONNX protobuf whose graph declares an input and an output but computes nothing.
    const v = (n: number): number[] => (n < 128 ? [n] : [(n % 128) | 128, ...v(Math.floor(n / 128))]);
    const bytes = (s: string) => [...Buffer.from(s)];
    const msg = (field: number, body: number[]) => [...v(field * 8 + 2), ...v(body.length), ...body];
    const num = (field: number, n: number) => [...v(field * 8), ...v(n)];
    const info = (name: string, dims: number[]) =>
      [...msg(1, bytes(name)), ...msg(2, msg(1, [...num(1, 1), ...msg(2, dims.flatMap((d) => msg(1, num(1, d))))]))];
    const model = [...num(1, 8), ...msg(7, [...msg(2, bytes("empty")), ...msg(11, info("images", [1, 3, 64, 64])), ...msg(12, info("output0", [1, 6, 10]))])];
    useModels({
      "broken.json": { name: "broken", model: "broken.onnx", features: ["PERSON_DETECTION"], mode: "replace", input: { width: 64, height: 64 }, output: { format: "yolov8" }, classes: { "0": "person" } },
    });
    fs.writeFileSync(path.join(modelsDir, "broken.onnx"), Buffer.from(model));
    expect(readOnnxIo(path.join(modelsDir, "broken.onnx"))).toEqual({
      inputs: [{ name: "images", type: "float32", shape: [1, 3, 64, 64] }],
      outputs: [{ name: "output0", type: "float32", shape: [1, 6, 10] }],
    });
    expect(customModelErrors(LOAD)).toEqual([]);
    expect(featureSupport(["PERSON_DETECTION"]).detectors).toEqual(["broken"]);
    const image = { data: new Uint8Array(64 * 64 * 3), width: 64, height: 64 };
    await expect(detectImage(image, ["PERSON_DETECTION"])).rejects.toThrow(/custom model manifest broken.json: model: onnxruntime cannot load .*broken.onnx/);
    expect(customModelErrors(LOAD).map((e) => e.file)).toEqual(["broken.json"]);
    expect(featureSupport(["PERSON_DETECTION"]).detectors).toEqual(["coco-centernet"]);
  });
});
