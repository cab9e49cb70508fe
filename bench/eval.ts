/**
 * `npm run eval`: detection quality of the vision engine on labelled photos, JSON out.
 *
 *   npm run eval -- faces  --images DIR --labels FILE [--every N] [--limit N] [options]
 *   npm run eval -- plates --dir DIR [--every N] [--limit N] [options]
 *
 * faces:  labels in WIDER FACE `bbx_gt` or FDDB ellipse format (detected from the content), images
 *         under DIR (label paths as written, or their bare file names, extension added if missing);
 *         runs features ["FACE_DETECTION"] and scores detections of type "face".
 * plates: a plates-us folder (openalpr benchmark: `<name>.jpg` + `<name>.txt` per image); runs
 *         ["LICENSE_PLATE_DETECTION"] and scores detections of type "licensePlate"; then reads
 *         each labelled plate (server/vision/plate-read.ts) twice: in the detection that overlaps it
 *         most (`reading`: what a user gets) and in the labelled box itself (`readingOnLabels`: the
 *         reader alone), and scores the strings (exact and character accuracy).
 *
 * Options:
 *   --json FILE          also write the result JSON to FILE
 *   --every N            evaluate every N-th labelled image (label-file order; 0, N, 2N, ...)
 *   --limit N            at most N images (after --every)
 *   --threshold X        settings.objectsConfidenceThreshold
 *   --inner-threshold X  settings.innerObjectsConfidenceThreshold
 *   --expand X           settings.faceBoxExpansionFactor
 *   --coverage X         fraction of a gt box one detection must cover to find it (default 0.7)
 *   --min-height PX      gt boxes lower than this are left out of the overall recall (default 10)
 *   --per-image          include one row per image in the JSON
 *   --engine MODULE      module exporting detectImage (default @/server/vision/engine)
 *
 * Prints the JSON on stdout, progress (n/total, running recall) on stderr. Metric definitions:
 * bench/eval/metrics.ts. Settings not given are the engine's defaults (reported as absent).
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import sharp from "sharp";
import type { Detection, ObjectType, RgbImage } from "@/server/vision/types";
import { loadPlatesUs, parseFaceLabels, resolveImagePath, type LabelBox } from "@/bench/eval/labels";
import { addCounts, addReading, emptyCounts, emptyReading, evaluateImage, readingSummary, summarize, type EvalCounts, type EvalMetrics } from "@/bench/eval/metrics";
import { type Box, iou } from "@/lib/geometry";

export interface DetectSettings {
  objectsConfidenceThreshold?: number;
  innerObjectsConfidenceThreshold?: number;
  faceBoxExpansionFactor?: number;
}

export type DetectImageFn = (image: RgbImage, features: string[], settings?: DetectSettings) => Promise<Detection[]>;

export type EvalTask = "faces" | "plates";

export interface EvalArgs {
  task: EvalTask;
  /** faces: image folder and label file. */
  images?: string;
  labels?: string;
  /** plates: the plates-us folder. */
  dir?: string;
  json?: string;
  every: number;
  limit?: number;
  settings: DetectSettings;
  minCoverage: number;
  minHeight: number;
  perImage: boolean;
  engine?: string;
}

export interface PerImageRow {
  image: string;
  gt: number;
  found: number;
  ignored: number;
  detections: number;
  falseBoxes: number;
  detectMs: number;
}

export interface EvalReport extends EvalMetrics {
  task: EvalTask;
  dataset: { images: string; labels: string; format: string };
  features: string[];
  objectType: ObjectType;
  settings: DetectSettings;
  options: { every: number; limit: number | null; minCoverage: number; minHeight: number };
  timestamp: string;
  labelledImages: number;
  missingImages: string[];
  counts: { gt: number; found: number; ignored: number; detections: number; touching: number; falseBoxes: number };
  imagesPerSecond: number | null;
  timing: { totalSeconds: number; decodeMsMean: number | null; detectMsMean: number | null; detectMsMedian: number | null; firstDetectMs: number | null };
  perImage?: PerImageRow[];
  /**
   * plates: `reading` = the plates the annotation API reports (its reading, region rules and
   * filters; a labelled plate with no reported plate over it counts as read wrong), with the
   * reported plates per image; `readingOnLabels` = the reader and region rules on the labelled boxes.
   */
  reading?: ReturnType<typeof readingSummary> & { readMsMean: number | null; reportedPerImage: number | null };
  readingOnLabels?: ReturnType<typeof readingSummary>;
}

const TASKS: Record<EvalTask, { features: string[]; type: ObjectType }> = {
  faces: { features: ["FACE_DETECTION"], type: "face" },
  plates: { features: ["LICENSE_PLATE_DETECTION"], type: "licensePlate" },
};

export const USAGE = `usage:
  npm run eval -- faces --images DIR --labels FILE [--json FILE] [--every N] [--limit N]
  npm run eval -- plates --dir DIR [--json FILE] [--every N] [--limit N]
options: --threshold X --inner-threshold X --expand X --coverage X --min-height PX --per-image --engine MODULE`;

export class UsageError extends Error {}

/** Parses the command line (without `node script`). Throws UsageError on bad input. */
export function parseArgs(argv: readonly string[]): EvalArgs {
  const [task, ...rest] = argv;
  if (task !== "faces" && task !== "plates") throw new UsageError(`unknown or missing task "${task ?? ""}"`);
  const opts = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    const eq = a.indexOf("=");
    const key = a.startsWith("--") ? (eq > 0 ? a.slice(2, eq) : a.slice(2)) : null;
    if (!key) throw new UsageError(`unexpected argument "${a}"`);
    if (key === "per-image" || key === "help") {
      flags.add(key);
      continue;
    }
    const value = eq > 0 ? a.slice(eq + 1) : rest[++i];
    if (value === undefined) throw new UsageError(`--${key} needs a value`);
    opts.set(key, value);
  }
  const known = ["images", "labels", "dir", "json", "every", "limit", "threshold", "inner-threshold", "expand", "coverage", "min-height", "engine"];
  for (const k of opts.keys()) if (!known.includes(k)) throw new UsageError(`unknown option --${k}`);
  const num = (k: string, check: (n: number) => boolean, what: string): number | undefined => {
    const v = opts.get(k);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || !check(n)) throw new UsageError(`--${k} must be ${what}, got "${v}"`);
    return n;
  };
  const posInt = (n: number) => Number.isInteger(n) && n >= 1;
  const settings: DetectSettings = {};
  const threshold = num("threshold", (n) => n >= 0 && n <= 1, "a number in 0..1");
  const inner = num("inner-threshold", (n) => n >= 0 && n <= 1, "a number in 0..1");
  const expand = num("expand", (n) => n > 0, "a positive number");
  if (threshold !== undefined) settings.objectsConfidenceThreshold = threshold;
  if (inner !== undefined) settings.innerObjectsConfidenceThreshold = inner;
  if (expand !== undefined) settings.faceBoxExpansionFactor = expand;
  const args: EvalArgs = {
    task,
    images: opts.get("images"),
    labels: opts.get("labels"),
    dir: opts.get("dir"),
    json: opts.get("json"),
    every: num("every", posInt, "a positive integer") ?? 1,
    limit: num("limit", posInt, "a positive integer"),
    settings,
    minCoverage: num("coverage", (n) => n > 0 && n <= 1, "a number in (0, 1]") ?? 0.7,
    minHeight: num("min-height", (n) => n >= 0, "a number >= 0") ?? 10,
    perImage: flags.has("per-image"),
    engine: opts.get("engine"),
  };
  if (task === "faces" && (!args.images || !args.labels)) throw new UsageError("faces needs --images DIR and --labels FILE");
  if (task === "plates" && !args.dir) throw new UsageError("plates needs --dir DIR");
  return args;
}

/** Decodes an image file to packed RGB, applying EXIF orientation. */
export async function decodeRgb(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(file).rotate().removeAlpha().toColourspace("srgb").raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`${file}: decoded to ${info.channels} channels, expected 3`);
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
}

async function loadDetector(engine?: string): Promise<DetectImageFn> {
  // A non-literal specifier: the engine is loaded only when needed (and may not exist yet).
  const spec = engine ? pathToFileURL(path.resolve(engine)).href : "@/server/vision/engine";
  let mod: { detectImage?: unknown };
  try {
    mod = (await import(spec)) as { detectImage?: unknown };
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (!engine && code === "ERR_MODULE_NOT_FOUND" && String((e as Error).message).includes("@/server")) {
      throw new Error(`the vision engine (${spec}) is not available; pass --engine MODULE to evaluate another detectImage`);
    }
    throw e;
  }
  if (typeof mod.detectImage !== "function") throw new Error(`${engine ?? spec} does not export detectImage`);
  return mod.detectImage as DetectImageFn;
}

const round = (x: number | null, digits = 4): number | null => (x === null ? null : Number(x.toFixed(digits)));

function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

export interface EvalDeps {
  /** Injected detector (tests, fakes); default: detectImage of @/server/vision/engine or --engine. */
  detectImage?: DetectImageFn;
  /** Progress sink; default stderr. */
  log?: (line: string) => void;
}

/** Runs one evaluation and returns the report (does not print it; writes --json when given). */
export async function runEval(args: EvalArgs, deps: EvalDeps = {}): Promise<EvalReport> {
  const log = deps.log ?? ((l: string) => process.stderr.write(l + "\n"));
  const { features, type } = TASKS[args.task];

  let labels: Map<string, LabelBox[]>;
  let format: string;
  let imageDir: string;
  let labelSource: string;
  if (args.task === "faces") {
    imageDir = path.resolve(args.images!);
    labelSource = path.resolve(args.labels!);
    const parsed = parseFaceLabels(await fs.promises.readFile(labelSource, "utf8"));
    labels = parsed.labels;
    format = parsed.format === "wider" ? "wider-bbx-gt" : "fddb-ellipse";
  } else {
    imageDir = path.resolve(args.dir!);
    labelSource = imageDir;
    labels = await loadPlatesUs(imageDir);
    format = "plates-us";
  }

  let entries = [...labels.entries()].filter((_, i) => i % args.every === 0);
  if (args.limit !== undefined) entries = entries.slice(0, args.limit);

  const detect = deps.detectImage ?? (await loadDetector(args.engine));
  const total = entries.length;
  const missing: string[] = [];
  const decodeMs: number[] = [];
  const detectMs: number[] = [];
  const rows: PerImageRow[] = [];
  let counts: EvalCounts = emptyCounts();
  let reading = emptyReading();
  let readingOnLabels = emptyReading();
  const readMs: number[] = [];
  let reportedPlates = 0;
  // Plate strings as the annotation API reports them (server/vehicle: reading, region rules, filters).
  const plateApi = args.task === "plates" && !deps.detectImage ? await plateReader() : null;
  const t0 = performance.now();
  let tAfterFirst: number | null = null;

  for (let n = 0; n < entries.length; n++) {
    const [name, gt] = entries[n];
    const file = resolveImagePath(imageDir, name);
    if (!file) {
      missing.push(name);
      log(`[eval] ${n + 1}/${total} missing image ${name}`);
      continue;
    }
    const td = performance.now();
    const image = await decodeRgb(file);
    const tdet = performance.now();
    const dets = (await detect(image, features, args.settings)).filter((d) => d.type === type);
    const tend = performance.now();
    decodeMs.push(tdet - td);
    detectMs.push(tend - tdet);
    if (tAfterFirst === null) tAfterFirst = tend;

    if (plateApi) {
      const tr = performance.now();
      const reported = await plateApi.plates(image);
      readMs.push(performance.now() - tr);
      reportedPlates += reported.length;
      for (const g of gt) {
        if (g.ignore || !g.text) continue;
        const best = reported.reduce<(typeof reported)[number] | null>((b, d) => (iou(d.box, g.box) > (b ? iou(b.box, g.box) : 0) ? d : b), null);
        reading = addReading(reading, best ? best.text : "", g.text);
        readingOnLabels = addReading(readingOnLabels, await plateApi.readBox(image, g.box), g.text);
      }
    }
    const c = evaluateImage(gt, dets, { minCoverage: args.minCoverage, minHeight: args.minHeight });
    counts = addCounts(counts, c);
    if (args.perImage) {
      rows.push({ image: name, gt: c.gt, found: c.found, ignored: c.ignored, detections: c.detections, falseBoxes: c.falseBoxes, detectMs: Math.round(tend - tdet) });
    }
    const s = summarize(counts);
    log(
      `[eval] ${n + 1}/${total} recall ${s.recall === null ? "-" : (s.recall * 100).toFixed(1) + "%"} (${counts.found}/${counts.gt})` +
        ` false/img ${(s.falseBoxesPerImage ?? 0).toFixed(2)} ${Math.round(tend - tdet)} ms ${name}`,
    );
  }

  const tEnd = performance.now();
  const done = detectMs.length;
  // Images per second over decode + detect, leaving out the first image (model loading, warm-up)
  // when there is more than one.
  const ips = done > 1 && tAfterFirst !== null ? (done - 1) / ((tEnd - tAfterFirst) / 1000) : done === 1 ? 1000 / (decodeMs[0] + detectMs[0]) : null;

  const m = summarize(counts);
  const report: EvalReport = {
    task: args.task,
    dataset: { images: imageDir, labels: labelSource, format },
    features,
    objectType: type,
    settings: args.settings,
    options: { every: args.every, limit: args.limit ?? null, minCoverage: args.minCoverage, minHeight: args.minHeight },
    timestamp: new Date().toISOString(),
    labelledImages: labels.size,
    ...m,
    recall: round(m.recall),
    precision: round(m.precision),
    recallBySize: Object.fromEntries(Object.entries(m.recallBySize).map(([k, b]) => [k, { ...b, recall: round(b.recall) }])) as EvalMetrics["recallBySize"],
    meanIou: round(m.meanIou),
    falseBoxesPerImage: round(m.falseBoxesPerImage, 3),
    boxesPerImage: round(m.boxesPerImage, 3),
    meanImageRecall: round(m.meanImageRecall),
    missingImages: missing,
    counts: { gt: counts.gt, found: counts.found, ignored: counts.ignored, detections: counts.detections, touching: counts.touching, falseBoxes: counts.falseBoxes },
    imagesPerSecond: round(ips, 3),
    timing: {
      totalSeconds: round((tEnd - t0) / 1000, 3)!,
      decodeMsMean: round(mean(decodeMs), 1),
      detectMsMean: round(mean(detectMs), 1),
      detectMsMedian: round(median(detectMs), 1),
      firstDetectMs: round(detectMs[0] ?? null, 1),
    },
    ...(args.perImage ? { perImage: rows } : {}),
    ...(plateApi
      ? {
          reading: { ...roundReading(readingSummary(reading)), reportedPerImage: round(done ? reportedPlates / done : null, 3), readMsMean: round(mean(readMs), 1) },
          readingOnLabels: roundReading(readingSummary(readingOnLabels)),
        }
      : {}),
  };
  if (args.json) {
    await fs.promises.mkdir(path.dirname(path.resolve(args.json)), { recursive: true });
    await fs.promises.writeFile(args.json, JSON.stringify(report, null, 2) + "\n");
  }
  return report;
}

/** The annotation API's plate analysis with its default parameters and the us group. */
async function plateReader() {
  const { analyzeImage, readCandidate } = await import("@/server/vehicle/analyze");
  const { parseVehicleParams } = await import("@/server/vehicle/params");
  const { BUILT_IN_GROUPS, compileGroup } = await import("@/server/vehicle/regions");
  const params = parseVehicleParams({}).params;
  const group = compileGroup(BUILT_IN_GROUPS.us!);
  return {
    /** The plates /v11/images:annotate would report. */
    plates: async (image: RgbImage) => (await analyzeImage(image, { vehicles: false, plates: true, params, group, groupName: "us" })).plates,
    /** The string read in a given box (the reader and the region rules alone, no filters on confidence). */
    readBox: async (image: RgbImage, box: Box) => (await readCandidate(image, box, { ...params, lptMinCharacters: 1, lptMaxCharacters: 16 }, group))?.text ?? "",
  };
}

function roundReading(r: ReturnType<typeof readingSummary>): ReturnType<typeof readingSummary> {
  return { plates: r.plates, exactAccuracy: round(r.exactAccuracy), charAccuracy: round(r.charAccuracy) };
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  let args: EvalArgs;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`eval: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    throw e;
  }
  const report = await runEval(args);
  process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  return 0;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`eval: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
