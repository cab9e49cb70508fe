/**
 * Vehicle make, model and generation from an ONNX classifier the operator supplies (no make/model
 * model with a usable licence ships on npm): a manifest `*.json` with `"task":
 * "vehicle-make-model"` in OBSCURA_MODELS_DIR, next to the custom detectors (docs/models.md).
 *
 *   { "name": "mmc", "task": "vehicle-make-model", "model": "mmc.onnx",
 *     "input": { "width": 224, "height": 224, ... as for detectors, resize defaults to stretch },
 *     "output": { "name": "logits", "activation": "softmax" },
 *     "labels": [ { "make": "Toyota", "model": "Camry", "generation": { "start": 2012, "end": 2017 },
 *                   "regions": ["us"] }, ... ],              // one per output class, in order
 *     "minScore": 0.2 }
 *
 * The vehicle's box (grown 5%) is cropped, laid into the input like a detector's, and the class
 * probabilities (softmax of the output unless `activation` is "none") are restricted to the labels
 * of the `mmcFilter` group (labels without `regions` belong to every group) and renormalised; the
 * best label below `minScore` answers "unknown" (make and model empty, score 0). Without a manifest
 * the same empty answer is given: nothing is ever invented.
 */
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ObscuraError } from "@/lib/errors";
import { clip, type Box } from "@/lib/geometry";
import { config } from "../config";
import { log } from "../log";
import { fitImage, inputData, inputSchema, manifestTask, readOnnxIo } from "../vision/custom";
import { ort, session } from "../vision/onnx";
import { cropRgb, pixelRegion, resizeRgb } from "../vision/text-detect";
import type { RgbImage } from "../vision/types";

export const MAKE_MODEL_TASK = "vehicle-make-model";

const labelSchema = z.strictObject({
  make: z.string({ error: "must be a string" }).max(64),
  model: z.string({ error: "must be a string" }).max(64),
  generation: z
    .strictObject({ start: z.number().int(), end: z.number().int() }, { error: "must be {start, end} years" })
    .refine((g) => g.end >= g.start, { error: "end must not be before start" })
    .optional(),
  regions: z.array(z.string()).optional(),
});

const manifestSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9-]{1,64}$/, { error: "must be 1-64 characters of a-z, 0-9 and '-'" }),
  task: z.literal(MAKE_MODEL_TASK),
  description: z.string().max(500).optional(),
  model: z.string({ error: "must be the ONNX file's path (relative to the manifest)" }).min(1),
  input: z.preprocess((v) => (v && typeof v === "object" && !("resize" in v) ? { ...v, resize: "stretch" } : v), inputSchema),
  output: z.strictObject({ name: z.string().min(1).optional(), activation: z.enum(["softmax", "none"], { error: "must be softmax or none" }).default("softmax") }).default({ activation: "softmax" }),
  labels: z.array(labelSchema, { error: "must be an array of {make, model, generation?, regions?}, one per class" }).min(1, { error: "must hold at least one label" }),
  minScore: z.number().min(0).max(1).default(0.2),
});
type Manifest = z.output<typeof manifestSchema>;
export type MakeModelLabel = z.output<typeof labelSchema>;

export interface MakeModel {
  make: string;
  model: string;
  generation: { start: number; end: number } | null;
  score: number;
}

export const UNKNOWN_MAKE_MODEL: Readonly<MakeModel> = { make: "", model: "", generation: null, score: 0 };

export class MakeModelClassifier {
  constructor(
    readonly manifest: Manifest,
    readonly modelFile: string,
    readonly classes: number,
  ) {}

  async classify(image: RgbImage, box: Box, group: string): Promise<MakeModel> {
    const m = this.manifest;
    const grown = clip({ x: box.x - box.width * 0.05, y: box.y - box.height * 0.05, width: box.width * 1.1, height: box.height * 1.1 }, image.width, image.height);
    const crop = cropRgb(image, pixelRegion(grown, image.width, image.height));
    const fit = fitImage(crop.width, crop.height, m.input.width, m.input.height, m.input.resize);
    const rgb = await resizeRgb(crop, fit.width, fit.height, "linear");
    const data = inputData(rgb, fit, m.input);
    const dims = m.input.layout === "NCHW" ? [1, 3, m.input.height, m.input.width] : [1, m.input.height, m.input.width, 3];
    const s = await session(this.modelFile);
    const tensor = data instanceof Uint8Array ? new ort.Tensor("uint8", data, dims) : new ort.Tensor("float32", data, dims);
    const out = await s.run({ [m.input.name ?? s.inputNames[0]!]: tensor });
    const t = out[m.output.name ?? s.outputNames[0]!];
    if (!t) throw new ObscuraError("INTERNAL", `make/model classifier ${m.name}: the model has no output ${m.output.name}`);
    const logits = Array.from(t.data as Float32Array).slice(0, this.classes);
    return pickLabel(logits, m.labels, group, m.output.activation, m.minScore);
  }
}

/** Probabilities over the labels of `group`, renormalised; the best one, or unknown below `minScore` (pure). */
export function pickLabel(values: readonly number[], labels: readonly MakeModelLabel[], group: string, activation: "softmax" | "none", minScore: number): MakeModel {
  const probs = activation === "softmax" ? softmax(values) : values.map((v) => Math.max(0, v));
  let total = 0;
  let best = -1;
  for (let i = 0; i < labels.length && i < probs.length; i++) {
    const l = labels[i]!;
    if (l.regions && !l.regions.includes(group)) continue;
    total += probs[i]!;
    if (best < 0 || probs[i]! > probs[best]!) best = i;
  }
  if (best < 0 || total <= 0) return { ...UNKNOWN_MAKE_MODEL };
  const score = probs[best]! / total;
  if (score < minScore) return { ...UNKNOWN_MAKE_MODEL };
  const l = labels[best]!;
  return { make: l.make, model: l.model, generation: l.generation ?? null, score };
}

function softmax(v: readonly number[]): number[] {
  const max = Math.max(...v);
  const e = v.map((x) => Math.exp(x - max));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

/** Reads and checks one make/model manifest; throws INVALID_ARGUMENT naming the file and field. */
export function loadMakeModelManifest(file: string): MakeModelClassifier {
  const base = path.basename(file);
  const r = manifestSchema.safeParse(JSON.parse(fs.readFileSync(/*turbopackIgnore: true*/ file, "utf8")));
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new ObscuraError("INVALID_ARGUMENT", `make/model manifest ${base}: ${i.path.join(".") || "(manifest)"}: ${i.message}`);
  }
  const m = r.data;
  const modelFile = path.resolve(path.dirname(file), m.model);
  if (!fs.existsSync(/*turbopackIgnore: true*/ modelFile)) throw new ObscuraError("INVALID_ARGUMENT", `make/model manifest ${base}: model: ${JSON.stringify(m.model)} is not a file (looked for ${modelFile})`);
  const io = readOnnxIo(modelFile);
  const out = (m.output.name ? io.outputs.find((o) => o.name === m.output.name) : io.outputs[0]) ?? null;
  if (!out) throw new ObscuraError("INVALID_ARGUMENT", `make/model manifest ${base}: output.name: the model has no output ${JSON.stringify(m.output.name)} (it has ${io.outputs.map((o) => o.name).join(", ")})`);
  const classes = out.shape ? Number(out.shape[out.shape.length - 1]) : NaN;
  if (Number.isFinite(classes) && classes > 0 && classes !== m.labels.length) {
    throw new ObscuraError("INVALID_ARGUMENT", `make/model manifest ${base}: labels: the model has ${classes} classes but ${m.labels.length} labels are given`);
  }
  return new MakeModelClassifier(m, modelFile, Number.isFinite(classes) && classes > 0 ? classes : m.labels.length);
}

const KEY = Symbol.for("obscura.vehicle.makeModel");
type Holder = { [KEY]?: { dir: string | null; classifier: MakeModelClassifier | null } };

/** The make/model classifier of OBSCURA_MODELS_DIR (the first valid manifest by file name), or null. */
export function makeModelClassifier(): MakeModelClassifier | null {
  const g = globalThis as Holder;
  const dir = config().modelsDir;
  if (g[KEY] && g[KEY].dir === dir) return g[KEY].classifier;
  let classifier: MakeModelClassifier | null = null;
  if (dir && fs.existsSync(/*turbopackIgnore: true*/ dir)) {
    for (const f of fs.readdirSync(/*turbopackIgnore: true*/ dir).filter((x) => x.endsWith(".json")).sort()) {
      const file = path.join(dir, f);
      if (manifestTask(file) !== MAKE_MODEL_TASK) continue;
      try {
        classifier = loadMakeModelManifest(file);
        log.info("make/model classifier", { name: classifier.manifest.name, manifest: file, labels: classifier.manifest.labels.length });
        break;
      } catch (e) {
        log.error("make/model classifier skipped", { manifest: file, error: (e as Error).message });
      }
    }
  }
  g[KEY] = { dir, classifier };
  return classifier;
}

export function resetMakeModel(): void {
  delete (globalThis as Holder)[KEY];
}
