/**
 * The vehicle and plate analysis behind /v11/images:annotate and /v2/vehicle (issue 8), without
 * HTTP: region groups and patterns, pipeline parameters, colour, a make/model classifier built here
 * as a real ONNX model, the analysis of drawn cars with real models, and the response forms.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterEach, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { analyzeImage, type Analysis } from "@/server/vehicle/analyze";
import { parseItem, requestItems, v11Annotations } from "@/server/vehicle/annotate";
import { colorName, vehicleColor } from "@/server/vehicle/color";
import { makeModelClassifier, pickLabel, resetMakeModel } from "@/server/vehicle/make-model";
import { parseVehicleParams, type VehicleParams } from "@/server/vehicle/params";
import { BUILT_IN_GROUPS, chooseRegion, compileGroup, compilePattern, fitPattern, loadGroups } from "@/server/vehicle/regions";
import { parseUrlList, v2Response } from "@/server/vehicle/v2";
import { OnnxGraph } from "@/server/vision/convert/onnx-graph";
import type { PlateChar } from "@/server/vision/plate-read";
import type { RgbImage } from "@/server/vision/types";
import { carPng, twoCarsPng } from "./helpers/cars";
import { useModelDataDir } from "./helpers/models";

useModelDataDir("vehicle");

const US = compileGroup(BUILT_IN_GROUPS.us!);
const EU = compileGroup(BUILT_IN_GROUPS.eu!);
const defaults = (over: Record<string, unknown> = {}): VehicleParams => parseVehicleParams(over).params;

/** A sure reading of `text`; `unsure` gives some positions a runner-up: index -> [best, p, second, p2]. */
function reading(text: string, unsure: Record<number, [string, number, string, number]> = {}): PlateChar[] {
  return [...text].map((c, i) => {
    const u = unsure[i];
    return u ? { char: u[0], confidence: u[1], alternatives: [[u[0], u[1]], [u[2], u[3]]] } : { char: c, confidence: 0.98, alternatives: [[c, 0.98]] };
  });
}

async function rgb(png: Buffer): Promise<RgbImage> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height };
}

describe("region groups", () => {
  it("compiles the pattern syntax: @ letter, # digit, ? either, literals, [sets]; separators ignored", () => {
    expect(compilePattern("#@-[AB]?7").map((s) => s.length)).toEqual([10, 26, 2, 36, 1]);
    expect(() => compilePattern("@@[AB")).toThrow(/no closing/);
    expect(() => compilePattern("--")).toThrow(/no character positions/);
  });

  it("fits a reading to a pattern by taking each place's best allowed candidate", () => {
    const chars = reading("1ABCI23", { 4: ["I", 0.6, "1", 0.35] });
    expect(fitPattern(chars, compilePattern("#@@@###"))).toEqual({ text: "1ABC123", logRatio: expect.closeTo(Math.log(0.35 / 0.6), 5) });
    expect(fitPattern(chars, compilePattern("@@@####"))!.logRatio).toBeLessThan(-5); // a letter where the reader saw only "1": very unlikely
    expect(fitPattern(chars, compilePattern("@@@###"))).toBeNull(); // another length
  });

  it("chooses the region and the string; a clear reading is never forced; posteriors are shares", () => {
    const ca = chooseRegion(reading("7ABC123"), US);
    expect(ca).toMatchObject({ text: "7ABC123", region: "US-CA", matched: true });
    expect(ca.score).toBeGreaterThan(0.9); // only California writes #@@@###
    const fixed = chooseRegion(reading("7ABCI23", { 4: ["I", 0.7, "1", 0.25] }), US);
    expect(fixed).toMatchObject({ text: "7ABC123", region: "US-CA" });
    const word = chooseRegion(reading("VIRGINIA"), US);
    expect(word).toEqual({ text: "VIRGINIA", region: "US", score: 0, matched: false });
    // Missouri's AB1-C2D: an unsure stroke read twice is left out; the us group writes O as 0
    const mo = chooseRegion(reading("SHOLR7X", { 3: ["L", 0.26, "I", 0.1] }), US);
    expect(mo).toMatchObject({ text: "SH0R7X", region: "US-MO", matched: true });
    expect(chooseRegion(reading("SHOLR7X"), US).text).toBe("SH0LR7X"); // a sure character is never dropped
    // FR (AB-123-CD) and IT (AB 123CD) write the same, and so do formats of PL, SK and others:
    // the winner's share is its prior over the priors of all regions that fit (12 of 34)
    const eu = chooseRegion(reading("AB123CD"), EU);
    expect(["FR", "IT"]).toContain(eu.region);
    expect(eu.score).toBeCloseTo(12 / 34, 3);
  });

  it("loads user groups from lptFilterDefinitions, extending built-ins, with errors naming the field", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "obscura-regions-"));
    const file = path.join(dir, "groups.json");
    fs.writeFileSync(file, JSON.stringify({ groups: { ca: { fallback: "CA", regions: [{ name: "CA-ON", patterns: ["@@@@ ###"] }, { name: "CA-QC", patterns: ["### @@@", "@## @@@"] }] }, na: { extends: ["us", "ca"] } } }));
    const groups = loadGroups(file);
    expect(Object.keys(groups).sort()).toEqual(["ca", "eu", "na", "us"]);
    expect(chooseRegion(reading("ABCD123"), compileGroup(groups.ca!))).toMatchObject({ region: "CA-ON", score: 1 });
    expect(groups.na!.regions.length).toBe(BUILT_IN_GROUPS.us!.regions.length + 2);
    fs.writeFileSync(file, JSON.stringify({ groups: { ca: { regions: [{ name: "CA-ON", patterns: ["@@[X"] }] } } }));
    expect(() => loadGroups(file)).toThrow(/groups\.ca\.regions\.0\.patterns\.0: pattern "@@\[X": "\[" at 2 has no closing/);
    fs.writeFileSync(file, JSON.stringify({ groups: { x: { extends: ["mars"] } } }));
    expect(() => loadGroups(file)).toThrow(/groups\.x\.extends: no group named "mars"/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe("pipeline parameters", () => {
  it("has the spec's defaults", () => {
    const { params, ignored } = parseVehicleParams({});
    expect(params).toMatchObject({ detectionMinConfidence: 0.3, detectionOverlapThreshold: 0.3, lptFilter: "us", lptMaxCharacters: 8, lptMinCharacters: 3, lptMinConfidence: 0.5, lptSingleCharThreshold: 0.18, lptStringScoring: "min", lptWeightDetScore: 0, rectifyLicensePlates: true, sourceId: "lpr-1", mmcFilter: "us" });
    expect(params.enabledClasses).toEqual(["car", "bus", "truck", "motorbike", "licenseplate"]);
    expect(ignored).toEqual([]);
  });

  it("names the parameter, the value and what is allowed; accepts the pipeline's other parameters unused", () => {
    expect(() => parseVehicleParams({ lptStringScoring: "median" })).toThrow(/lptStringScoring: must be min, max or average \(got "median"\)/);
    expect(() => parseVehicleParams({ lptMinConfidence: 2 })).toThrow(/lptMinConfidence: lptMinConfidence must be from 0 to 1 \(got 2\)/);
    expect(() => parseVehicleParams({ lptMinCharacters: 9 })).toThrow(/lptMinCharacters \(9\) must not exceed lptMaxCharacters \(8\)/);
    expect(() => parseVehicleParams({ lptFilterr: "us" })).toThrow(/lptFilterr is not a pipeline parameter; known: .*lptFilter/);
    expect(parseVehicleParams({ enabledClasses: "car, licenseplate", useTracker: true, amqpHost: "x" })).toMatchObject({ params: { enabledClasses: ["car", "licenseplate"] }, ignored: ["useTracker", "amqpHost"] });
  });
});

describe("colour", () => {
  it("names pixels", () => {
    expect([colorName(200, 30, 30), colorName(20, 60, 200), colorName(245, 245, 245), colorName(10, 10, 12), colorName(150, 150, 152), colorName(230, 200, 20), colorName(30, 140, 60), colorName(120, 70, 30)]).toEqual(["red", "blue", "white", "black", "silver", "yellow", "green", "brown"]);
  });

  it("finds the body colour of drawn cars", async () => {
    const box = { x: 110, y: 172, width: 620, height: 225 };
    for (const [fill, name] of [["#c0392b", "red"], ["#2255aa", "blue"], ["#f4f4f4", "white"], ["#e6c200", "yellow"], ["#1e8449", "green"]] as const) {
      const c = vehicleColor(await rgb(await carPng(fill, "ABC123")), box);
      expect(c.value, fill).toBe(name);
      expect(c.score).toBeGreaterThan(0.5);
    }
  });
});

describe("analysis of drawn cars (real models)", () => {
  it("finds the car, reads and links its plate, names the region and the colour", async () => {
    const a = await analyzeImage(await rgb(await carPng("#c0392b", "4KPM219")), { vehicles: true, plates: true, params: defaults(), group: US, groupName: "us" });
    expect(a.vehicles).toHaveLength(1);
    expect(a.vehicles[0]).toMatchObject({ vehicleClass: "car", color: { value: "red" }, makeModel: { make: "", model: "", generation: null, score: 0 }, plate: 0 });
    expect(a.plates).toHaveLength(1);
    expect(a.plates[0]).toMatchObject({ text: "4KPM219", region: "US-CA", vehicle: 0 });
    expect(a.plates[0]!.score).toBeGreaterThan(0.9);
    // the four corners surround the drawn plate (x 112-222, y 278-322)
    const xs = a.plates[0]!.quad.map((p) => p[0]);
    const ys = a.plates[0]!.quad.map((p) => p[1]);
    expect(Math.min(...xs)).toBeGreaterThan(100);
    expect(Math.max(...xs)).toBeLessThan(235);
    expect(Math.min(...ys)).toBeGreaterThan(268);
    expect(Math.max(...ys)).toBeLessThan(332);
  });

  it("honours the plate parameters and the dummy values", async () => {
    const image = await rgb(await carPng("#f4f4f4", "8TRX552"));
    const run = (over: Record<string, unknown>, what = { vehicles: true, plates: true }) => analyzeImage(image, { ...what, params: defaults(over), group: US, groupName: "us" });
    expect((await run({ lptMinCharacters: 8 })).plates).toEqual([]); // 7 characters read
    expect((await run({ lptMaxCharacters: 6 })).plates).toEqual([]);
    expect((await run({ lptMinConfidence: 1 })).plates).toEqual([]);
    expect((await run({ rectifyLicensePlates: false })).plates.map((p) => p.text)).toEqual(["8TRX552"]);
    const weighted = (await run({ lptWeightDetScore: 1 })).plates[0]!;
    expect(weighted.score).toBeCloseTo(weighted.detectionScore, 5);
    const dummy = await run({ lpStringDummyValue: "DUMMY", lpRegionDummyValue: "XX", colorDummyValue: "pink", makeModelDummyValue: "Acme" });
    expect(dummy.plates.map((p) => [p.text, p.region, p.regionScore])).toEqual([["DUMMY", "XX", 1]]);
    expect(dummy.vehicles[0]).toMatchObject({ color: { value: "pink", score: 1 }, makeModel: { make: "Acme", model: "Acme", score: 1 } });
    expect((await run({ enabledClasses: ["licenseplate"] })).vehicles).toEqual([]);
    expect((await run({ enabledClasses: ["car"] })).plates).toEqual([]);
    expect((await run({}, { vehicles: false, plates: true })).vehicles).toEqual([]);
    // a car whose plate cannot be read is dropped with lptSkipCarsWithoutLPs
    const bare = await rgb(await carPng("#f4f4f4", ""));
    expect((await analyzeImage(bare, { vehicles: true, plates: true, params: defaults(), group: US, groupName: "us" })).vehicles).toHaveLength(1);
    expect((await analyzeImage(bare, { vehicles: true, plates: true, params: defaults({ lptSkipCarsWithoutLPs: true }), group: US, groupName: "us" })).vehicles).toEqual([]);
  });

  it("draws what the v11 API answers for a drawn car (docs/img/vehicle-annotate.png with OBSCURA_DOCS_SCREENSHOTS=1)", async () => {
    const png = await carPng("#c0392b", "4KPM219");
    const image = await rgb(png);
    const a = await analyzeImage(image, { vehicles: true, plates: true, params: defaults(), group: US, groupName: "us" });
    const r = v11Annotations({ ...a, locale: "us" }, 0, { vehicles: true, plates: true, maxVehicles: Infinity, maxPlates: Infinity }) as { vehicleAnnotations: any[]; licenseplateAnnotations: any[] };
    const poly = (p: { boundingPoly: { vertices: Array<{ x: number; y: number }> } }) => p.boundingPoly.vertices.map((v) => `${v.x},${v.y}`).join(" ");
    const label = (x: number, y: number, text: string, color: string) =>
      `<rect x="${x}" y="${y - 17}" width="${text.length * 7.4 + 8}" height="20" fill="${color}"/><text x="${x + 4}" y="${y - 3}" font-family="DejaVu Sans Mono" font-size="12" fill="#fff">${text}</text>`;
    const v = r.vehicleAnnotations[0];
    const p = r.licenseplateAnnotations[0];
    const overlay = `<svg xmlns="http://www.w3.org/2000/svg" width="${image.width}" height="${image.height}">
<polygon points="${poly(v)}" fill="none" stroke="#00e5ff" stroke-width="3"/>${label(v.boundingPoly.vertices[0].x, v.boundingPoly.vertices[0].y, `${v.description} ${v.score} · ${v.color.value} ${v.color.score}`, "#007c8a")}
<polygon points="${poly(p)}" fill="none" stroke="#ffd400" stroke-width="3"/>${label(p.boundingPoly.vertices[3].x, p.boundingPoly.vertices[3].y + 22, `${p.string.value} ${p.string.score} · ${p.region.value} ${p.region.score}`, "#8a6d00")}
</svg>`;
    const out = await sharp(png).composite([{ input: Buffer.from(overlay) }]).png().toBuffer();
    expect(out.length).toBeGreaterThan(1000);
    if (process.env.OBSCURA_DOCS_SCREENSHOTS) fs.writeFileSync(path.join(process.cwd(), "docs", "img", "vehicle-annotate.png"), out);
  });

  it("pairs each plate with its own car", async () => {
    const a = await analyzeImage(await rgb(await twoCarsPng(["#c0392b", "4KPM219"], ["#f4f4f4", "8TRX552"])), { vehicles: true, plates: true, params: defaults({ detectionMinConfidence: 0.1 }), group: US, groupName: "us" });
    expect(a.vehicles).toHaveLength(2);
    const byText = Object.fromEntries(a.plates.map((p) => [p.text, a.vehicles[p.vehicle!]!.color.value]));
    expect(byText).toEqual({ "4KPM219": "red", "8TRX552": "white" });
    for (const [i, v] of a.vehicles.entries()) expect(a.plates[v.plate!]!.vehicle).toBe(i);
  });
});

describe("make and model from an operator's ONNX classifier", () => {
  const saved = process.env.OBSCURA_MODELS_DIR;
  afterEach(() => {
    if (saved === undefined) delete process.env.OBSCURA_MODELS_DIR;
    else process.env.OBSCURA_MODELS_DIR = saved;
    resetConfig();
    resetMakeModel();
  });

  it("restricts the labels to the mmcFilter group, renormalises, and answers unknown under minScore", () => {
    const labels = [{ make: "A", model: "1" }, { make: "B", model: "2", regions: ["eu"] }, { make: "C", model: "3", regions: ["us"] }];
    expect(pickLabel([0.5, 0.3, 0.2], labels, "us", "none", 0.2)).toMatchObject({ make: "A", score: expect.closeTo(0.5 / 0.7, 5) });
    expect(pickLabel([0.1, 0.6, 0.3], labels, "us", "none", 0.2)).toMatchObject({ make: "C", score: expect.closeTo(0.75, 5) });
    expect(pickLabel([0, 0, 0], labels, "us", "softmax", 0.6)).toEqual({ make: "", model: "", generation: null, score: 0 });
  });

  it("runs a real classifier named by a manifest in OBSCURA_MODELS_DIR (mean colour of the crop as logits)", async () => {
    // images [1,3,32,32] -> mean per channel x 20 -> logits [1,3]: red, green, blue
    const g = new OnnxGraph();
    const x = g.addInput("images", "float32", [1, 3, 32, 32]);
    const pooled = g.op1("GlobalAveragePool", [x], {}, { dtype: "float32", shape: [1, 3, 1, 1] }, "pool");
    const flat = g.op1("Reshape", [pooled, g.int64([1, 3])], {}, { dtype: "float32", shape: [1, 3] }, "flat");
    g.addOutput("logits", g.op1("Mul", [flat, g.constant("float32", [1], [20])], {}, { dtype: "float32", shape: [1, 3] }, "scaled"));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "obscura-mmc-"));
    fs.writeFileSync(path.join(dir, "colour.onnx"), g.encode({ producer: "test", doc: "", props: {} }));
    const labels = [
      { make: "Ferrari", model: "Testarossa", generation: { start: 1984, end: 1996 } },
      { make: "Lotus", model: "Elise" },
      { make: "Subaru", model: "Impreza", generation: { start: 2017, end: 2023 } },
    ];
    fs.writeFileSync(path.join(dir, "mmc.json"), JSON.stringify({ name: "colour-mmc", task: "vehicle-make-model", model: "colour.onnx", input: { width: 32, height: 32 }, output: { name: "logits" }, labels, minScore: 0.6 }));
    process.env.OBSCURA_MODELS_DIR = dir;
    resetConfig();
    resetMakeModel();
    expect(makeModelClassifier()?.manifest.name).toBe("colour-mmc");
    const analyse = async (fill: string) => (await analyzeImage(await rgb(await carPng(fill, "ABC1234")), { vehicles: true, plates: false, params: defaults(), group: US, groupName: "us" })).vehicles[0]!.makeModel;
    const red = await analyse("#e02020");
    expect(red).toMatchObject({ make: "Ferrari", model: "Testarossa", generation: { start: 1984, end: 1996 } });
    expect(red.score).toBeGreaterThan(0.6);
    expect(await analyse("#2040e0")).toMatchObject({ make: "Subaru", model: "Impreza" });
    expect(await analyse("#f4f4f4")).toEqual({ make: "", model: "", generation: null, score: 0 }); // all channels alike: no label reaches 0.6
    // a manifest with the wrong number of labels is refused with the reason; detectors ignore the file
    fs.writeFileSync(path.join(dir, "mmc.json"), JSON.stringify({ name: "colour-mmc", task: "vehicle-make-model", model: "colour.onnx", input: { width: 32, height: 32 }, labels: labels.slice(0, 2) }));
    resetMakeModel();
    expect(makeModelClassifier()).toBeNull();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe("request and response forms", () => {
  it("refuses a malformed request as a whole, naming the problem", () => {
    expect(() => requestItems([], 16)).toThrow(/must be a JSON object/);
    expect(() => requestItems({}, 16)).toThrow(/requests is required/);
    expect(() => requestItems({ requests: {} }, 16)).toThrow(/requests must be an array/);
    expect(() => requestItems({ requests: [] }, 16)).toThrow(/at least one item/);
    expect(() => requestItems({ requests: [1, 2, 3] }, 2)).toThrow(/holds 3 items; at most 2/);
    expect(() => requestItems({ requests: [1], extra: 1 }, 2)).toThrow(/unknown field extra/);
  });

  it("checks each item on its own, naming the field", () => {
    const img = { content: "aGVsbG8=" };
    expect(() => parseItem({ features: [{ type: "VEHICLE_DETECTION" }] }, 2)).toThrow(/requests\[2\]\.image is required/);
    expect(() => parseItem({ image: { content: "x", source: { imageUri: "http://a" } }, features: [{ type: "VEHICLE_DETECTION" }] }, 0)).toThrow(/either content or source.imageUri, not both/);
    expect(() => parseItem({ image: img, features: [] }, 0)).toThrow(/requests\[0\]\.features must be a non-empty array/);
    expect(() => parseItem({ image: img, features: [{ type: "FACE_DETECTION" }] }, 1)).toThrow(/requests\[1\]\.features\[0\]\.type must be one of VEHICLE_DETECTION, LICENSE_PLATE_DETECTION, got "FACE_DETECTION"/);
    expect(() => parseItem({ image: img, features: [{ type: "VEHICLE_DETECTION", maxResults: 0 }] }, 0)).toThrow(/maxResults must be a whole number/);
    expect(parseItem({ image: { source: { imageUri: "http://x/a.jpg" } }, features: [{ type: "LICENSE_PLATE_DETECTION", maxResults: 2 }] }, 0)).toEqual({ image: { imageUri: "http://x/a.jpg" }, features: { vehicles: false, plates: true, maxVehicles: Infinity, maxPlates: 2 } });
    expect(parseUrlList({ urlList: ["http://x/a.jpg"] })).toBe("http://x/a.jpg");
    expect(() => parseUrlList({ urlList: ["a", "b"] })).toThrow(/urlList must hold exactly one URL, got 2/);
    expect(() => parseUrlList({ urlList: [] })).toThrow(/exactly one URL, got 0/);
  });

  const analysis: Analysis & { locale: string } = {
    width: 1000,
    height: 500,
    locale: "us",
    vehicles: [
      { box: { x: 100, y: 100, width: 400, height: 300 }, vehicleClass: "car", score: 0.91, color: { value: "red", score: 0.8 }, makeModel: { make: "", model: "", generation: null, score: 0 }, plate: 1 },
      { box: { x: 600, y: 100, width: 300, height: 300 }, vehicleClass: "truck", score: 0.7, color: { value: "white", score: 0.6 }, makeModel: { make: "Volvo", model: "FH", generation: { start: 2012, end: 2020 }, score: 0.7 }, plate: null },
    ],
    plates: [
      { box: { x: 620, y: 300, width: 100, height: 30 }, quad: [[620, 300], [720, 300], [720, 330], [620, 330]], detectionScore: 0.8, text: "XYZ999", textScore: 0.9, region: "US-NY", regionScore: 0.2, score: 0.9, vehicle: null },
      { box: { x: 250, y: 320, width: 100, height: 30 }, quad: [[250, 320], [350, 322], [350, 352], [250, 350]], detectionScore: 0.9, text: "7ABC123", textScore: 0.95, region: "US-CA", regionScore: 0.99, score: 0.95, vehicle: 0 },
    ],
  };

  it("v11: annotations with $ref pointers, four vertices in pixels and 0-1, mids and descriptions", () => {
    const r = v11Annotations(analysis, 3, { vehicles: true, plates: true, maxVehicles: Infinity, maxPlates: Infinity });
    expect(r.vehicleAnnotations[0]).toEqual({
      make: { value: "", score: 0 },
      model: { value: "", score: 0 },
      generation: { value: null, score: 0 },
      color: { value: "red", score: 0.8 },
      licenseplate: { $ref: "#/responses/3/licenseplateAnnotations/1" },
      boundingPoly: { vertices: [{ x: 100, y: 100 }, { x: 500, y: 100 }, { x: 500, y: 400 }, { x: 100, y: 400 }], normalizedVertices: [{ x: 0.1, y: 0.2 }, { x: 0.5, y: 0.2 }, { x: 0.5, y: 0.8 }, { x: 0.1, y: 0.8 }] },
      locale: "us",
      score: 0.91,
      mid: "/m/0k4j",
      description: "car",
    });
    expect(r.vehicleAnnotations[1]).toMatchObject({ make: { value: "Volvo", score: 0.7 }, generation: { value: { start: 2012, end: 2020 }, score: 0.7 }, mid: "/m/07r04", description: "truck" });
    expect(r.vehicleAnnotations[1]).not.toHaveProperty("licenseplate");
    expect(r.licenseplateAnnotations[1]).toEqual({
      string: { value: "7ABC123", score: 0.95 },
      region: { value: "US-CA", score: 0.99 },
      boundingPoly: { vertices: [{ x: 250, y: 320 }, { x: 350, y: 322 }, { x: 350, y: 352 }, { x: 250, y: 350 }], normalizedVertices: [{ x: 0.25, y: 0.64 }, { x: 0.35, y: 0.644 }, { x: 0.35, y: 0.704 }, { x: 0.25, y: 0.7 }] },
      locale: "us",
      score: 0.95,
      mid: "/m/01jfm_",
      description: "Vehicle registration plate",
    });
    // maxResults cuts the lists; a pointer never points past the plates returned
    const cut = v11Annotations(analysis, 0, { vehicles: true, plates: true, maxVehicles: 1, maxPlates: 1 });
    expect(cut.licenseplateAnnotations).toHaveLength(1);
    expect(cut.vehicleAnnotations).toHaveLength(1);
    expect(cut.vehicleAnnotations[0]).not.toHaveProperty("licenseplate");
  });

  it("v2: the hosted and the container forms, field by field", () => {
    const base = { url: "http://x/car.jpg", sourceId: "lpr-1", splitMakeModel: false, startedMs: 1_700_000_000_000, frameMs: 1_700_000_000_100, completedMs: 1_700_000_000_900 };
    const hosted = v2Response(analysis, { ...base, form: "hosted" });
    expect(hosted).toMatchObject({ apiVersion: { major: 1, minor: 1 }, frameDimensions: { w: 1000, h: 500 }, frameSource: "http://x/car.jpg", sourceId: "lpr-1", frameId: "0", analyticsTimestamp: 1_700_000_000_900, frameTimestamp: 1_700_000_000_100, links: [], engine_version: expect.any(String), time_analytics_start: 1_700_000_000, time_analytics_complete: 1_700_000_000.9 });
    expect(hosted.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(hosted.metaClasses.licensePlates["lp-2"]).toEqual({
      attributes: { lpString: { value: "7ABC123", attributeScore: 0.95, detectionScore: 0.9, updated: true }, lpRegion: { value: "US-CA", attributeScore: 0.99, detectionScore: 0.9, updated: true } },
      firstFrameTimestamp: 1_700_000_000_100,
      bestDetectionTimestamp: 1_700_000_000_100,
      class: "licensePlate",
      box: { height: 30, width: 100, x: 250, y: 320 },
      detectionScore: 0.9,
      updated: true,
      links: [{ metaClass: "vehicles", id: "vehicle-1" }],
    });
    expect(hosted.metaClasses.vehicles["vehicle-1"]).toMatchObject({ class: "car", links: [{ metaClass: "licensePlates", id: "lp-2" }], attributes: { vehicleType: { value: { make: "", model: "", generation: "", type: "car" }, attributeScore: 0, detectionScore: 0.91, updated: true }, color: { value: "red", attributeScore: 0.8 } } });
    const container = v2Response(analysis, { ...base, form: "container" });
    expect(container).not.toHaveProperty("frameTimestamp");
    expect((container.metaClasses.vehicles["vehicle-2"] as { attributes: { vehicleType: { value: unknown } } }).attributes.vehicleType.value).toBe("Volvo FH 2012-2020");
    expect((container.metaClasses.vehicles["vehicle-1"] as { attributes: { vehicleType: { value: unknown } } }).attributes.vehicleType.value).toBe("");
  });
});
