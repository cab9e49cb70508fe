/**
 * Vehicle and plate analysis of one image, independent of the response form (v11, v2 hosted, v2
 * container all format this result):
 *
 *   vehicles: the COCO detector's car / bus / truck / motorcycle boxes at detectionMinConfidence,
 *             merged across classes at detectionOverlapThreshold, limited to enabledClasses;
 *             colour from the pixels (color.ts), make/model from an operator's classifier (make-model.ts).
 *   plates:   plate candidates from the text-line plate detector (vision/plates.ts), each read on its
 *             rectified text line (vision/plate-read.ts); characters under lptSingleCharThreshold
 *             dropped; region and string chosen by the region group's patterns (regions.ts); the
 *             string scored by lptStringScoring, the plate by lptWeightDetScore; plates reading fewer
 *             than lptMinCharacters or more than lptMaxCharacters, or scoring under lptMinConfidence,
 *             are not reported (text that is not a plate reads badly or not at all), nor are
 *             letters-only strings no format of the group fits (state names, dealers, slogans).
 *   links:    each plate goes to the vehicle box holding most of it (one plate per vehicle, the
 *             best); lptSkipCarsWithoutLPs drops vehicles left without one.
 * The *DummyValue parameters skip their analysis and answer the given value.
 */
import { type Box, coverage, iou, nms } from "@/lib/geometry";
import { CocoDetector } from "../vision/objects";
import { PlateDetector, PLATE_DEFAULTS } from "../vision/plates";
import { readPlate, type PlateChar } from "../vision/plate-read";
import type { Point } from "../vision/text-detect";
import type { Detector, RgbImage } from "../vision/types";
import { vehicleColor } from "./color";
import { type MakeModel, UNKNOWN_MAKE_MODEL, makeModelClassifier } from "./make-model";
import type { VehicleClass, VehicleParams } from "./params";
import { type CompiledGroup, chooseRegion } from "./regions";

export type Quad = [Point, Point, Point, Point];

export interface PlateResult {
  box: Box;
  /** The plate's four corners (clockwise from top-left as read), in image pixels. */
  quad: Quad;
  detectionScore: number;
  text: string;
  textScore: number;
  region: string;
  regionScore: number;
  /** Combined score: lptWeightDetScore x detection + (1 - it) x string score. */
  score: number;
  /** Index of the vehicle it belongs to. */
  vehicle: number | null;
}

export interface VehicleResult {
  box: Box;
  vehicleClass: VehicleClass;
  score: number;
  color: { value: string; score: number };
  makeModel: MakeModel;
  /** Index of its plate. */
  plate: number | null;
}

export interface Analysis {
  width: number;
  height: number;
  vehicles: VehicleResult[];
  plates: PlateResult[];
  /** People, when asked for (the analytics pipeline's `person` class): the same detector run. */
  people?: Array<{ box: Box; score: number }>;
}

export interface AnalyzeRequest {
  vehicles: boolean;
  plates: boolean;
  params: VehicleParams;
  /** The region group plates are read against (lptFilter's, or a forced one). */
  group: CompiledGroup;
  /** Its name, as `locale` reports it. */
  groupName: string;
  /** Also report people (from the same detector run). */
  people?: boolean;
  /** Finds vehicles instead of the built-in COCO detector (a custom model: the pipeline's detectionModel). */
  vehicleDetector?: Detector;
}

const COCO_CLASS: Record<string, VehicleClass> = { car: "car", bus: "bus", truck: "truck", motorcycle: "motorbike", motorbike: "motorbike" };

/** A detector's vehicle label as a COCO class (custom models may say motorbike, van, or nothing: car). */
function vehicleLabel(label: string | undefined): string {
  const l = (label ?? "").toLowerCase();
  return COCO_CLASS[l] ? l : l === "van" || l === "pickup" ? "truck" : "car";
}

/** Plate candidates read at most (best detection scores first). */
const MAX_PLATE_CANDIDATES = 24;
/** Candidates below this detection score are not read (the reading decides among the rest). */
const PLATE_CANDIDATE_SCORE = 0.2;

const KEY = Symbol.for("obscura.vehicle.detectors");
function detectors(): { coco: CocoDetector; plates: PlateDetector; platesAccurate: PlateDetector } {
  const g = globalThis as { [KEY]?: ReturnType<typeof detectors> };
  return (g[KEY] ??= { coco: new CocoDetector(), plates: new PlateDetector(), platesAccurate: new PlateDetector({ scale: 1.5 }) });
}

export async function analyzeImage(image: RgbImage, req: AnalyzeRequest): Promise<Analysis> {
  const p = req.params;
  const enabled = new Set<string>(p.enabledClasses);
  const vehicles: VehicleResult[] = [];
  let people: Analysis["people"];
  if (req.vehicles || req.people) {
    const all = await (req.vehicleDetector ?? detectors().coco).detect(image, { threshold: p.detectionMinConfidence });
    if (req.people) people = nms(all.filter((d) => d.type === "person").sort((a, b) => b.score - a.score), p.detectionOverlapThreshold).map((d) => ({ box: d.box, score: d.score }));
    const found = all
      .filter((d) => req.vehicles && d.type === "vehicle")
      .map((d) => ({ ...d, label: req.vehicleDetector ? vehicleLabel(d.label) : (d.label ?? "") }))
      .filter((d) => COCO_CLASS[d.label] && enabled.has(COCO_CLASS[d.label]!))
      .sort((a, b) => b.score - a.score);
    for (const d of nms(found, p.detectionOverlapThreshold)) {
      vehicles.push({ box: d.box, vehicleClass: COCO_CLASS[d.label!]!, score: d.score, color: { value: "", score: 0 }, makeModel: { ...UNKNOWN_MAKE_MODEL }, plate: null });
    }
  }
  const plates: PlateResult[] = req.plates && enabled.has("licenseplate") ? await findPlates(image, req) : [];
  link(vehicles, plates);
  const kept = p.lptSkipCarsWithoutLPs && req.plates ? vehicles.filter((v) => v.plate !== null) : vehicles;
  if (kept.length !== vehicles.length) {
    // plates point at the kept list (vehicles left out had no plate, so no plate loses its vehicle)
    for (const pl of plates) pl.vehicle = pl.vehicle === null ? null : kept.indexOf(vehicles[pl.vehicle]!);
  }
  const classifier = p.makeModelDummyValue ? null : makeModelClassifier();
  for (const v of kept) {
    v.color = p.colorDummyValue ? { value: p.colorDummyValue, score: 1 } : vehicleColor(image, v.box);
    if (p.makeModelDummyValue) v.makeModel = { make: p.makeModelDummyValue, model: p.makeModelDummyValue, generation: null, score: 1 };
    else if (classifier) v.makeModel = await classifier.classify(image, v.box, p.mmcFilter);
  }
  return { width: image.width, height: image.height, vehicles: kept, plates, ...(people ? { people } : {}) };
}

async function findPlates(image: RgbImage, req: AnalyzeRequest): Promise<PlateResult[]> {
  const p = req.params;
  const detector = p.lptPreferAccuracyToSpeed ? detectors().platesAccurate : detectors().plates;
  const candidates = (await detector.detect(image, { threshold: PLATE_CANDIDATE_SCORE })).slice(0, MAX_PLATE_CANDIDATES);
  const out: PlateResult[] = [];
  for (const c of candidates) {
    const r = await readCandidate(image, c.box, p, req.group);
    if (!r) continue;
    const score = p.lptWeightDetScore * c.score + (1 - p.lptWeightDetScore) * r.textScore;
    if (!p.lpStringDummyValue && score < p.lptMinConfidence) continue;
    out.push({ box: c.box, quad: r.quad ?? boxQuad(c.box), detectionScore: c.score, text: r.text, textScore: r.textScore, region: r.region, regionScore: r.regionScore, score, vehicle: null });
  }
  // One plate read twice (a line and its joined fragments): the better reading stays.
  out.sort((a, b) => b.score - a.score);
  return out.filter((pl, i) => !out.slice(0, i).some((q) => iou(q.box, pl.box) > 0.3 || coverage(pl.box, q.box) > 0.7));
}

/**
 * Reads one plate region under the parameters: the string (region rules applied), its score, the
 * region and the plate's corners; null when the reading breaks the character-count or letters-only
 * rules (not a plate). lptMinConfidence is left to the caller (it may weigh in the detection).
 */
export async function readCandidate(
  image: RgbImage,
  box: Box,
  p: VehicleParams,
  group: CompiledGroup,
): Promise<{ text: string; textScore: number; region: string; regionScore: number; quad: Quad | null } | null> {
  const skipReading = Boolean(p.lpStringDummyValue && p.lpRegionDummyValue);
  const reading = skipReading ? null : await readPlate(image, box, undefined, { rectify: p.rectifyLicensePlates });
  const chars: PlateChar[] = (reading?.chars ?? []).filter((ch) => ch.confidence >= p.lptSingleCharThreshold);
  const choice = chooseRegion(chars, group);
  let text = choice.text;
  let textScore = stringScore(chars, p.lptStringScoring);
  if (p.lpStringDummyValue) {
    text = p.lpStringDummyValue;
    textScore = 1;
  } else if (text.length < p.lptMinCharacters || text.length > p.lptMaxCharacters) return null;
  // Letters only and no format of the group fits: a state name, a dealer's or a slogan, not a plate.
  else if (!choice.matched && !/[0-9]/.test(text)) return null;
  const region = p.lpRegionDummyValue ? { value: p.lpRegionDummyValue, score: 1 } : { value: choice.region, score: choice.score };
  return { text, textScore, region: region.value, regionScore: region.score, quad: reading?.line ? plateQuad(reading.line.quad) : null };
}

/** The string's score from its characters' probabilities. */
export function stringScore(chars: readonly PlateChar[], scoring: VehicleParams["lptStringScoring"]): number {
  if (!chars.length) return 0;
  const c = chars.map((ch) => ch.confidence);
  if (scoring === "min") return Math.min(...c);
  if (scoring === "max") return Math.max(...c);
  return c.reduce((a, b) => a + b, 0) / c.length;
}

/** The text line's quad grown to the plate's outline (the detector's own growth factors). */
function plateQuad(line: readonly Point[]): Quad {
  const [p0, p1, , p3] = line as Quad;
  const cx = line.reduce((s, q) => s + q[0], 0) / 4;
  const cy = line.reduce((s, q) => s + q[1], 0) / 4;
  const ux = ((p1[0] - p0[0]) / 2) * PLATE_DEFAULTS.lengthFactor;
  const uy = ((p1[1] - p0[1]) / 2) * PLATE_DEFAULTS.lengthFactor;
  const vx = ((p3[0] - p0[0]) / 2) * PLATE_DEFAULTS.heightFactor;
  const vy = ((p3[1] - p0[1]) / 2) * PLATE_DEFAULTS.heightFactor;
  return [
    [cx - ux - vx, cy - uy - vy],
    [cx + ux - vx, cy + uy - vy],
    [cx + ux + vx, cy + uy + vy],
    [cx - ux + vx, cy - uy + vy],
  ];
}

function boxQuad(b: Box): Quad {
  return [
    [b.x, b.y],
    [b.x + b.width, b.y],
    [b.x + b.width, b.y + b.height],
    [b.x, b.y + b.height],
  ];
}

/** Each plate to the vehicle box holding most of it (at least half); one plate per vehicle. */
function link(vehicles: VehicleResult[], plates: PlateResult[]): void {
  for (let pi = 0; pi < plates.length; pi++) {
    const pl = plates[pi]!;
    let best = -1;
    let bestCover = 0.5;
    for (let vi = 0; vi < vehicles.length; vi++) {
      if (vehicles[vi]!.plate !== null) continue;
      const c = coverage(pl.box, vehicles[vi]!.box);
      if (c > bestCover || (c === bestCover && best >= 0 && vehicles[vi]!.score > vehicles[best]!.score)) {
        bestCover = c;
        best = vi;
      }
    }
    if (best >= 0) {
      pl.vehicle = best;
      vehicles[best]!.plate = pi;
    }
  }
}
