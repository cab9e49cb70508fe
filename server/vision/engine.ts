/**
 * The detection engine: which detector answers which feature, with the request's thresholds.
 *
 * - `detectImage(image, features, settings)`: runs each needed detector once on the image (a
 *   detector serving several features runs once), keeps the types the features ask for, applies
 *   `objectsConfidenceThreshold` to primary objects (person, vehicle) and
 *   `innerObjectsConfidenceThreshold` to everything else (faces, heads, plates, ids, screens,
 *   documents: the lower threshold is the safer side for redaction), and scales face and head
 *   boxes by `faceBoxExpansionFactor` (clipped to the image).
 * - `featureSupport()`: which features have a detector installed in this build.
 * - Custom ONNX detectors from OBSCURA_MODELS_DIR (custom.ts, docs/models.md) run after the
 *   built-ins: mode "add" merges their boxes with the built-ins' (the NMS below), mode "replace"
 *   takes their features (and only those) away from the built-in detectors.
 * Detectors are created once per process and reused (their ONNX sessions too).
 */
import { clip, expand, nms } from "@/lib/geometry";
import { DETECTION_FEATURES } from "@/lib/api/common";
import { PRIMARY_OBJECT_TYPES } from "../tracking";
import type { Detection, Detector, ObjectType, RgbImage } from "./types";
import { PlateDetector } from "./plates";
import { CocoDetector } from "./objects";
import { HeadDetector } from "./heads";
import { IdCardDetector } from "./ids";
import { detectFacesShared, faceDetector } from "./shared";
import { TextDocumentDetector } from "./documents";
import { type LoadOptions, customModels, loadCustomModels, resetCustomModels } from "./custom";

export type DetectionFeature = (typeof DETECTION_FEATURES)[number];

export interface EngineSettings {
  objectsConfidenceThreshold: number;
  innerObjectsConfidenceThreshold: number;
  faceBoxExpansionFactor: number;
}

export const DEFAULT_ENGINE_SETTINGS: EngineSettings = {
  objectsConfidenceThreshold: 0.3,
  innerObjectsConfidenceThreshold: 0.15,
  faceBoxExpansionFactor: 1.5,
};

/** The object types each feature asks for. */
export const FEATURE_TYPES: Record<DetectionFeature, ObjectType[]> = {
  PERSON_DETECTION: ["person"],
  HEAD_DETECTION: ["head"],
  FACE_DETECTION: ["face"],
  VEHICLE_DETECTION: ["vehicle"],
  LICENSE_PLATE_DETECTION: ["licensePlate"],
  ID_DETECTION: ["id"],
  SCREEN_DETECTION: ["screen"],
  DOCUMENT_DETECTION: ["document"],
};

interface DetectorEntry {
  name: string;
  features: DetectionFeature[];
  create(): Detector;
  /** Types this entry must not report (a custom model replaces their features). */
  exclude?: ObjectType[];
  /** A ready instance (custom models), used instead of the per-process cache. */
  detector?: Detector;
}

/** Installed detectors, in the order they run. */
const DETECTORS: DetectorEntry[] = [
  { name: "coco-centernet", features: ["PERSON_DETECTION", "VEHICLE_DETECTION", "SCREEN_DETECTION", "DOCUMENT_DETECTION"], create: () => new CocoDetector() },
  { name: "plates-ppocr", features: ["LICENSE_PLATE_DETECTION"], create: () => new PlateDetector() },
  { name: "documents-text", features: ["DOCUMENT_DETECTION"], create: () => new TextDocumentDetector() },
  { name: "heads-movenet", features: ["HEAD_DETECTION"], create: () => new HeadDetector() },
  { name: "faces-faceboxes", features: ["FACE_DETECTION"], create: () => sharedFaceDetector() },
  { name: "ids-face-text", features: ["ID_DETECTION"], create: () => new IdCardDetector() },
];

const FACES = "faces-faceboxes";

/** Faces through the per-image share, so heads and ID cards reuse the same run. */
function sharedFaceDetector(): Detector {
  const d = faceDetector();
  return { name: d.name, types: d.types, detect: (image, o) => detectFacesShared(image, o.threshold) };
}

const KEY = Symbol.for("obscura.vision.detectors");
function instance(entry: DetectorEntry): Detector {
  const g = globalThis as { [KEY]?: Map<string, Detector> };
  const m = (g[KEY] ??= new Map());
  let d = m.get(entry.name);
  if (!d) {
    d = entry.create();
    m.set(entry.name, d);
  }
  return d;
}

const customOptions = (): LoadOptions => ({ reserved: DETECTORS.map((d) => d.name), featureTypes: FEATURE_TYPES });

/** The built-in detectors less the features custom models replace, then the custom models. */
function detectorEntries(): DetectorEntry[] {
  const custom = customModels(customOptions());
  const replaced = new Set(custom.filter((c) => c.mode === "replace").flatMap((c) => c.features));
  if (!custom.length) return DETECTORS;
  const builtIn = DETECTORS.map((d) => ({ ...d, features: d.features.filter((f) => !replaced.has(f)), exclude: [...replaced].flatMap((f) => FEATURE_TYPES[f]) }));
  return [...builtIn.filter((d) => d.features.length), ...custom.map((c) => ({ name: c.name, features: c.features, create: () => c.detector, detector: c.detector }))];
}

/** Forgets detector instances and custom manifests (tests changing OBSCURA_MODELS_DIR or manifests). */
export function resetDetectors(): void {
  delete (globalThis as { [KEY]?: unknown })[KEY];
  resetCustomModels();
}

export function featureSupport(features: readonly string[]): { supported: DetectionFeature[]; missing: DetectionFeature[]; detectors: string[] } {
  const wanted = features.filter((f): f is DetectionFeature => (DETECTION_FEATURES as readonly string[]).includes(f));
  const entries = detectorEntries();
  const supported = wanted.filter((f) => entries.some((d) => d.features.includes(f)));
  const detectors = entries.filter((d) => d.features.some((f) => wanted.includes(f))).map((d) => d.name);
  return { supported, missing: wanted.filter((f) => !supported.includes(f)), detectors };
}

export function thresholdFor(type: ObjectType, s: EngineSettings): number {
  return (PRIMARY_OBJECT_TYPES as readonly ObjectType[]).includes(type) ? s.objectsConfidenceThreshold : s.innerObjectsConfidenceThreshold;
}

export interface DetectImageOptions {
  /** Run detectors at `threshold * scoreFactor` (the tracker keeps low scores to extend tracks). */
  scoreFactor?: number;
  /** Detectors to run instead of the shared ones, by registry name (a video schedule's per-frame detectors). */
  detectors?: Readonly<Record<string, Detector>>;
}

export async function detectImage(
  image: RgbImage,
  features: readonly string[],
  settings: Partial<EngineSettings> = {},
  opts: DetectImageOptions = {},
): Promise<Detection[]> {
  const s = { ...DEFAULT_ENGINE_SETTINGS, ...settings };
  const factor = opts.scoreFactor ?? 1;
  const { supported } = featureSupport(features);
  const types = new Set(supported.flatMap((f) => FEATURE_TYPES[f]));
  const out: Detection[] = [];
  // One face run per call and threshold, shared by faces, heads and ID cards.
  const faceRuns = new Map<number, Promise<Detection[]>>();
  const faces = (threshold: number): Promise<Detection[]> => {
    let run = faceRuns.get(threshold);
    if (!run) faceRuns.set(threshold, (run = (opts.detectors?.[FACES] ?? instance(DETECTORS.find((d) => d.name === FACES)!)).detect(image, { threshold })));
    return run;
  };
  for (const entry of detectorEntries()) {
    if (!entry.features.some((f) => supported.includes(f))) continue;
    const det = opts.detectors?.[entry.name] ?? entry.detector ?? instance(entry);
    const wantedTypes = det.types.filter((t) => types.has(t) && !entry.exclude?.includes(t));
    const minThreshold = Math.min(...wantedTypes.map((t) => thresholdFor(t, s))) * factor;
    const found = entry.name === FACES ? await faces(minThreshold) : await det.detect(image, { threshold: minThreshold, faces });
    for (const d of found) {
      if (!types.has(d.type) || entry.exclude?.includes(d.type) || d.score < thresholdFor(d.type, s) * factor) continue;
      const box = d.type === "face" || d.type === "head" ? clip(expand(d.box, s.faceBoxExpansionFactor), image.width, image.height) : d.box;
      if (box.width > 0 && box.height > 0) out.push({ ...d, box });
    }
  }
  // Two detectors may report one object (a book and its text block): one box per object and type.
  const byType = new Map<ObjectType, Detection[]>();
  for (const d of out) byType.set(d.type, [...(byType.get(d.type) ?? []), d]);
  return [...byType.values()].flatMap((list) => (list.length > 1 ? nms(list, MERGE_IOU) : list));
}

/** Boxes of one type from different detectors overlapping more than this are one object. */
const MERGE_IOU = 0.6;

/**
 * Converts the TF.js models to ONNX (cached under OBSCURA_DATA_DIR/models) ahead of the first job;
 * called in the background when a worker starts. Failures are logged and retried on first use.
 */
export async function prepareModels(): Promise<void> {
  const { MODEL_NAMES, ensureModel } = await import("./models");
  const { log } = await import("../log");
  const t0 = Date.now();
  for (const name of MODEL_NAMES) {
    await ensureModel(name).catch((e) => log.warn("model not prepared", { model: name, error: (e as Error).message }));
  }
  await loadCustomModels(customOptions());
  log.info("vision models ready", { ms: Date.now() - t0 });
}

/** Custom models (OBSCURA_MODELS_DIR) that find vehicles, by name: the pipeline's detectionModel choices. */
export function customVehicleModels(): Map<string, Detector> {
  return new Map(customModels(customOptions()).filter((c) => c.features.includes("VEHICLE_DETECTION")).map((c) => [c.name, c.detector]));
}
