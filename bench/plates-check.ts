/**
 * Plate detector quality on a labelled folder (data/plates-us layout: `<name>.txt` per image, one
 * tab-separated line `<image> <x> <y> <width> <height> <plate string>`).
 *
 *   node --import tsx bench/plates-check.ts /work/shared/data/plates-us [--scale 1] [--max-side N]
 *        [--threshold 0.1,0.3,0.5,0.6,0.7] [--limit N] [--out results.json]
 *
 * A plate counts as found when one detected box covers >= 70% of the labelled box (`coverage`).
 * Text detection runs once per image; the plate step (pure) is then evaluated for the shipped
 * settings and a few variants, at each threshold. Prints recall, boxes per image and ms per image
 * (text detection + plate step, decode excluded, one warm-up call first).
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { type Box, coverage } from "@/lib/geometry";
import { PLATE_DEFAULTS, PlateDetector, type PlateOptions, platesFromText } from "@/server/vision/plates";
import { detectText, type TextBox } from "@/server/vision/text-detect";
import type { RgbImage } from "@/server/vision/types";

const args = process.argv.slice(2);
const dir = args.find((a, i) => !a.startsWith("--") && (i === 0 || !args[i - 1].startsWith("--")));
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
if (!dir || !fs.existsSync(dir)) {
  process.stderr.write("usage: node --import tsx bench/plates-check.ts <labelled folder> [--scale 1] [--max-side N] [--threshold 0.3,0.5] [--limit N] [--out file.json]\n");
  process.exit(2);
}
const scale = Number(flag("scale") ?? 1);
const maxSide = flag("max-side") ? Number(flag("max-side")) : undefined;
const thresholds = (flag("threshold") ?? "0.1,0.3,0.5,0.6,0.7").split(",").map(Number);
const limit = Number(flag("limit") ?? Infinity);
const progress = (msg: string) => process.stderr.write(`[plates] ${msg}\n`);

/** The shipped settings first, then variants that show what each step buys. */
const VARIANTS: Array<[string, Partial<PlateOptions>]> = [
  ["shipped", {}],
  ["grow only (no shape filter, no join)", { minAspect: 0.01, maxAspect: 1e9, maxTiltDegrees: 90, minLineHeight: 0, maxWidthFraction: 1, maxHeightFraction: 1, maxStackedLines: 0, joinGap: -1e9, nmsIou: 1, nmsContained: 2 }],
  ["no fragment join", { joinGap: -1e9 }],
  ["no stacked-line filter", { maxStackedLines: 0 }],
  ["stacked-line filter at 1 (drops two-row plates)", { maxStackedLines: 1 }],
  ["aspect 1.7..3.8 (tight)", { minAspect: 1.7, maxAspect: 3.8 }],
  ["grow 1.25 x 2.2", { lengthFactor: 1.25, heightFactor: 2.2 }],
];

interface Sample {
  name: string;
  plate: Box;
  width: number;
  height: number;
  lines: TextBox[];
}

const labels = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith(".txt") && !/^readme/i.test(f))
  .sort()
  .slice(0, limit);

async function load(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(file).rotate().removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
}

const detector = new PlateDetector({ scale, ...(maxSide ? { maxSide } : {}) });
const textOptions = detector.textOptions();
const samples: Sample[] = [];
let ms = 0;
let first = true;
for (const [i, label] of labels.entries()) {
  const [image, x, y, w, h] = fs.readFileSync(path.join(dir, label), "utf8").trim().split("\t");
  const rgb = await load(path.join(dir, image));
  if (first) {
    await detectText(rgb, textOptions); // warm-up: session creation is not per-image cost
    first = false;
  }
  const t0 = performance.now();
  const lines = await detectText(rgb, textOptions);
  platesFromText(lines, rgb.width, rgb.height, detector.options, 0);
  ms += performance.now() - t0;
  samples.push({ name: image, plate: { x: +x, y: +y, width: +w, height: +h }, width: rgb.width, height: rgb.height, lines });
  if ((i + 1) % 20 === 0 || i + 1 === labels.length) progress(`${i + 1}/${labels.length} images, ${(ms / (i + 1)).toFixed(0)} ms/image`);
}

const rows: Array<Record<string, unknown>> = [];
for (const [variant, options] of VARIANTS) {
  for (const threshold of thresholds) {
    let found = 0;
    let boxes = 0;
    const missed: string[] = [];
    for (const s of samples) {
      const dets = platesFromText(s.lines, s.width, s.height, { ...options }, threshold);
      boxes += dets.length;
      if (dets.some((d) => coverage(s.plate, d.box) >= 0.7)) found++;
      else missed.push(s.name);
    }
    rows.push({
      variant,
      threshold,
      recall: +(found / samples.length).toFixed(3),
      boxesPerImage: +(boxes / samples.length).toFixed(2),
      ...(variant === "shipped" ? { missed } : {}),
    });
  }
}

const summary = {
  images: samples.length,
  scale,
  maxSide: textOptions.maxSide,
  msPerImage: Math.round(ms / samples.length),
  settings: { ...PLATE_DEFAULTS, ...detector.options },
  results: rows,
};
console.log(`plates-check: ${samples.length} images, scale ${scale}, max side ${textOptions.maxSide}, ${summary.msPerImage} ms/image`);
console.log("variant".padEnd(50) + "thr".padStart(6) + "recall".padStart(8) + "boxes/img".padStart(11));
for (const r of rows) {
  console.log(String(r.variant).padEnd(50) + String(r.threshold).padStart(6) + String(r.recall).padStart(8) + String(r.boxesPerImage).padStart(11));
}
const shipped = rows.filter((r) => r.variant === "shipped");
for (const r of shipped) {
  const missed = r.missed as string[];
  if (missed.length) console.log(`missed at ${r.threshold}: ${missed.join(" ")}`);
}
const out = flag("out");
if (out) {
  fs.writeFileSync(out, JSON.stringify(summary, null, 2) + "\n");
  progress(`wrote ${out}`);
}
