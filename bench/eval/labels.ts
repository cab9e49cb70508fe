/**
 * Ground-truth label readers for `npm run eval` (bench/eval.ts).
 *
 * - WIDER FACE `bbx_gt` (e.g. `wider_face_val_bbx_gt.txt`, data/faces-dev/labels.txt):
 *       <image path>                       e.g. `0--Parade/0_Parade_marchingband_1_20.jpg` or a bare name
 *       <number of faces N>
 *       x y w h blur expression illumination invalid occlusion pose     (N lines; x, y = top-left)
 *   A count of 0 is followed by one dummy line (`0 0 0 0 0 0 0 0 0 0`) in the official file; it is
 *   skipped when present and tolerated when absent. Boxes flagged `invalid = 1` are kept with
 *   `ignore: true` (neither a required hit nor a false positive); zero-area boxes are dropped.
 * - FDDB ellipses (`FDDB-fold-XX-ellipseList.txt`):
 *       <image path without extension>     e.g. `2002/08/11/big/img_591`
 *       <number of faces N>
 *       major_axis_radius minor_axis_radius angle center_x center_y 1   (N lines; angle in radians)
 *   Each ellipse becomes its axis-aligned bounding box.
 * - plates-us (openalpr benchmark, data/plates-us): one `<name>.txt` per image, each line
 *       <image file> \t <x> \t <y> \t <width> \t <height> \t <plate string>
 *
 * Parsers are pure (text in, Map out); only `loadPlatesUs` and `resolveImagePath` touch the disk.
 */
import fs from "node:fs";
import path from "node:path";
import type { Box } from "@/lib/geometry";

export interface LabelBox {
  box: Box;
  /** An "ignore" region (e.g. WIDER `invalid = 1`): never required, never a false positive. */
  ignore: boolean;
  /** WIDER attributes when read from a `bbx_gt` file. */
  attributes?: WiderAttributes;
  /** Plate string (plates-us). */
  text?: string;
}

export interface WiderAttributes {
  blur: number;
  expression: number;
  illumination: number;
  invalid: number;
  occlusion: number;
  pose: number;
}

/** Image path (as written in the label file) -> its boxes, in file order. */
export type LabelMap = Map<string, LabelBox[]>;

export type FaceLabelFormat = "wider" | "fddb";

function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

function numbers(line: string): number[] | null {
  const parts = line.split(/\s+/);
  const out = parts.map(Number);
  return out.every((n) => Number.isFinite(n)) ? out : null;
}

function isCountLine(line: string | undefined): boolean {
  return line !== undefined && /^\d+$/.test(line);
}

/**
 * Reads the common "name / count / N record lines" layout shared by WIDER and FDDB.
 * `fields` is the minimum number of numeric fields a record line has.
 */
function parseBlocks(
  text: string,
  fields: number,
  format: string,
  toLabel: (values: number[], lineNo: number) => LabelBox | null,
): LabelMap {
  const ls = lines(text);
  const out: LabelMap = new Map();
  let i = 0;
  while (i < ls.length) {
    const name = ls[i++];
    if (!isCountLine(ls[i])) throw new Error(`${format} labels: expected a face count after "${name}" (entry ${out.size + 1})`);
    const count = Number(ls[i++]);
    const boxes = out.get(name) ?? [];
    for (let k = 0; k < count; k++) {
      const v = ls[i] === undefined ? null : numbers(ls[i]);
      if (!v || v.length < fields) {
        throw new Error(`${format} labels: "${name}" declares ${count} boxes but record ${k + 1} is "${ls[i] ?? "<end of file>"}"`);
      }
      i++;
      const label = toLabel(v, i);
      if (label) boxes.push(label);
    }
    if (count === 0) {
      // The official WIDER file writes one dummy record after a 0 count; skip it when present.
      const v = ls[i] === undefined ? null : numbers(ls[i]);
      if (v && v.length >= fields) i++;
    }
    out.set(name, boxes);
  }
  return out;
}

/** WIDER FACE `bbx_gt` text -> image path -> boxes (invalid ones kept as ignore regions). */
export function parseWiderBbx(text: string): LabelMap {
  return parseBlocks(text, 4, "WIDER", (v) => {
    const [x, y, w, h, blur = 0, expression = 0, illumination = 0, invalid = 0, occlusion = 0, pose = 0] = v;
    if (!(w > 0 && h > 0)) return null; // the all-zero placeholder and degenerate boxes
    return {
      box: { x, y, width: w, height: h },
      ignore: invalid === 1,
      attributes: { blur, expression, illumination, invalid, occlusion, pose },
    };
  });
}

/** Axis-aligned bounding box of an ellipse with semi-axes `a` (along `angle`, radians) and `b`. */
export function ellipseBounds(a: number, b: number, angle: number, cx: number, cy: number): Box {
  const c = Math.cos(angle);
  const s = Math.sin(angle);
  const hw = Math.sqrt(a * a * c * c + b * b * s * s);
  const hh = Math.sqrt(a * a * s * s + b * b * c * c);
  return { x: cx - hw, y: cy - hh, width: 2 * hw, height: 2 * hh };
}

/** FDDB ellipse-list text -> image path (no extension, as written) -> bounding boxes of the ellipses. */
export function parseFddbEllipse(text: string): LabelMap {
  return parseBlocks(text, 5, "FDDB", (v) => {
    const [major, minor, angle, cx, cy] = v;
    if (!(major > 0 && minor > 0)) return null;
    return { box: ellipseBounds(major, minor, angle, cx, cy), ignore: false };
  });
}

/**
 * Tells WIDER `bbx_gt` from FDDB ellipses by the first record line: WIDER has 10 integer fields
 * (at least 4), FDDB 6 fields ending in `1` with fractional values.
 */
export function detectLabelFormat(text: string): FaceLabelFormat {
  const ls = lines(text);
  for (let i = 1; i < ls.length; i++) {
    if (!isCountLine(ls[i]) || isCountLine(ls[i - 1])) continue;
    const rec = ls[i + 1] ? numbers(ls[i + 1]) : null;
    if (!rec) continue; // a 0 count followed by the next name
    if (rec.length === 10) return "wider";
    if (rec.length === 6) return "fddb";
    if (rec.length === 4) return "wider";
    if (rec.length === 5) return "fddb";
    throw new Error(`face labels: unrecognised record line "${ls[i + 1]}" (expected WIDER bbx_gt or FDDB ellipses)`);
  }
  throw new Error("face labels: no records found (expected WIDER bbx_gt or FDDB ellipses)");
}

/** Parses face labels in either supported format, detected from the content. */
export function parseFaceLabels(text: string): { format: FaceLabelFormat; labels: LabelMap } {
  const format = detectLabelFormat(text);
  return { format, labels: format === "wider" ? parseWiderBbx(text) : parseFddbEllipse(text) };
}

/** One plates-us label file's text -> image file -> plate boxes (with their strings). */
export function parsePlatesUs(text: string): LabelMap {
  const out: LabelMap = new Map();
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const parts = line.split("\t");
    if (parts.length < 5) throw new Error(`plates-us labels: expected "<file>\\t<x>\\t<y>\\t<w>\\t<h>\\t<plate>", got "${line}"`);
    const [file, ...rest] = parts;
    const [x, y, width, height] = rest.slice(0, 4).map(Number);
    if (![x, y, width, height].every(Number.isFinite)) throw new Error(`plates-us labels: bad numbers in "${line}"`);
    const text = (rest[4] ?? "").trim();
    const boxes = out.get(file.trim()) ?? [];
    if (width > 0 && height > 0) boxes.push({ box: { x, y, width, height }, ignore: false, ...(text ? { text } : {}) });
    out.set(file.trim(), boxes);
  }
  return out;
}

/** Reads every `*.txt` label file of a plates-us folder, in name order; image names are relative to `dir`. */
export async function loadPlatesUs(dir: string): Promise<LabelMap> {
  const files = (await fs.promises.readdir(dir)).filter((f) => f.endsWith(".txt")).sort();
  const out: LabelMap = new Map();
  for (const f of files) {
    for (const [img, boxes] of parsePlatesUs(await fs.promises.readFile(path.join(dir, f), "utf8"))) {
      out.set(img, [...(out.get(img) ?? []), ...boxes]);
    }
  }
  return out;
}

const IMAGE_EXTENSIONS = [".jpg", ".jpeg", ".png", ".webp"];

/**
 * Finds the image a label names under `dir`: the path as written, then its bare file name (data
 * sets that flatten WIDER's event folders), each also with an image extension added (FDDB names
 * have none). Returns null when none exists.
 */
export function resolveImagePath(dir: string, name: string): string | null {
  const candidates = [name, path.basename(name)];
  for (const c of candidates) {
    for (const ext of ["", ...IMAGE_EXTENSIONS]) {
      const p = path.join(dir, c + ext);
      if (fs.existsSync(p) && fs.statSync(p).isFile()) return p;
    }
  }
  return null;
}
