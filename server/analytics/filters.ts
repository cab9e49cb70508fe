/**
 * Box filters (`boxFilterConfig`, spec "Box filtering"; docs/pipeline.md#box-filters): a JSON list
 * of filters applied to every frame's boxes before tracking and sensors, in order.
 *
 *   roi    region [x, y, w, h] in pixels, or 0-1 of the frame when all four are within [0, 1];
 *          behavior boxInRoi: the share of the box inside the region, roiInBox: the share of the
 *          region inside the box; requiredOverlap in percent (default 100; 0: any overlap at all);
 *          a box meeting it is kept (exclude false, the default) or dropped (exclude true); a box
 *          not meeting it the other way round.
 *   size   subtype dimension (the longer side), width, height, area or aspectRatio (width/height);
 *          min and max in pixels (pixels² for area), or 0-1 of the frame's matching size when in
 *          (0, 1] (the frame's longer side, width, height or area); 0 means no limit. Boxes outside
 *          [min, max] are dropped. aspectRatio is a plain ratio.
 * Either type applies only to its `classes` (empty or absent: all); other boxes pass untouched.
 * `debug: true` logs each decision (so does debugSettings filteringDebug).
 */
import fs from "node:fs";
import { z } from "zod";
import { ObscuraError } from "@/lib/errors";
import type { Box } from "@/lib/geometry";
import { zodDetails } from "../vehicle/params";

const classes = z.array(z.string({ error: "classes must be class names such as car or licenseplate" }), { error: "classes must be a list of class names" }).default([]);
const roi = z.strictObject({
  name: z.string({ error: "name must be a string" }).default(""),
  type: z.literal("roi"),
  region: z.tuple([z.number(), z.number(), z.number(), z.number()], { error: "region must be [x, y, w, h]" }),
  classes,
  behavior: z.enum(["boxInRoi", "roiInBox"], { error: "behavior must be boxInRoi or roiInBox" }).default("boxInRoi"),
  requiredOverlap: z.number({ error: "requiredOverlap must be a percentage from 0 to 100" }).min(0, { error: "requiredOverlap must be from 0 to 100" }).max(100, { error: "requiredOverlap must be from 0 to 100" }).default(100),
  exclude: z.boolean({ error: "exclude must be true or false" }).default(false),
  debug: z.boolean({ error: "debug must be true or false" }).default(false),
});
const size = z.strictObject({
  name: z.string({ error: "name must be a string" }).default(""),
  type: z.literal("size"),
  subtype: z.enum(["dimension", "width", "height", "area", "aspectRatio"], { error: "subtype must be dimension, width, height, area or aspectRatio" }),
  min: z.number({ error: "min must be a number (0: no limit)" }).min(0, { error: "min must be 0 or more" }).default(0),
  max: z.number({ error: "max must be a number (0: no limit)" }).min(0, { error: "max must be 0 or more" }).default(0),
  classes,
  debug: z.boolean({ error: "debug must be true or false" }).default(false),
});
const filterSchema = z.discriminatedUnion("type", [roi, size], { error: "type must be roi or size" });
export type BoxFilter = z.output<typeof filterSchema>;

export function parseBoxFilters(input: unknown, where = "boxFilterConfig"): BoxFilter[] {
  let raw = input;
  if (typeof input === "string") {
    if (!input) return [];
    try {
      raw = JSON.parse(fs.readFileSync(/*turbopackIgnore: true*/ input, "utf8"));
    } catch (e) {
      throw new ObscuraError("INVALID_ARGUMENT", `${where}: ${input} cannot be read as JSON: ${(e as Error).message}`);
    }
  }
  const r = z.array(filterSchema, { error: "must be a JSON list of filters" }).safeParse(raw);
  if (!r.success) {
    const details = zodDetails(r.error, raw).map((d) => {
      const [i, ...rest] = d.field.split(".");
      return { field: i === "" ? where : `${where}[${i}]${rest.length ? `.${rest.join(".")}` : ""}`, problem: d.problem };
    });
    throw new ObscuraError("INVALID_ARGUMENT", `${where}: ${details.map((d) => `${d.field}: ${d.problem}`).join("; ")}`, { details });
  }
  for (const [i, f] of r.data.entries()) {
    if (f.type === "roi" && (f.region[2] <= 0 || f.region[3] <= 0)) throw new ObscuraError("INVALID_ARGUMENT", `${where}[${i}].region: width and height must be above 0 (got ${JSON.stringify(f.region)})`);
    if (f.type === "size" && f.max > 0 && f.min > f.max) throw new ObscuraError("INVALID_ARGUMENT", `${where}[${i}]: min (${f.min}) must not exceed max (${f.max})`);
  }
  return r.data;
}

export interface FilterBox {
  cls: string;
  box: Box;
}

function overlapArea(a: Box, b: Box): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/** Whether a box passes one filter. */
export function passes(f: BoxFilter, b: FilterBox, frame: { width: number; height: number }): boolean {
  if (f.classes.length && !f.classes.includes(b.cls)) return true;
  if (f.type === "roi") {
    const [x, y, w, h] = f.region;
    const rel = f.region.every((v) => v >= 0 && v <= 1);
    const r: Box = rel ? { x: x * frame.width, y: y * frame.height, width: w * frame.width, height: h * frame.height } : { x, y, width: w, height: h };
    const inter = overlapArea(b.box, r);
    const base = f.behavior === "boxInRoi" ? b.box.width * b.box.height : r.width * r.height;
    const share = base > 0 ? (inter / base) * 100 : 0;
    const meets = f.requiredOverlap === 0 ? inter > 0 : share >= f.requiredOverlap - 1e-9;
    return f.exclude ? !meets : meets;
  }
  const { width: bw, height: bh } = b.box;
  let value: number;
  let ref: number;
  switch (f.subtype) {
    case "dimension":
      value = Math.max(bw, bh);
      ref = Math.max(frame.width, frame.height);
      break;
    case "width":
      value = bw;
      ref = frame.width;
      break;
    case "height":
      value = bh;
      ref = frame.height;
      break;
    case "area":
      value = bw * bh;
      ref = frame.width * frame.height;
      break;
    default:
      value = bh > 0 ? bw / bh : 0;
      ref = 1;
  }
  const limit = (v: number) => (f.subtype !== "aspectRatio" && v > 0 && v <= 1 ? v * ref : v);
  if (f.min > 0 && value < limit(f.min)) return false;
  if (f.max > 0 && value > limit(f.max)) return false;
  return true;
}

/** Applies the filters in order; `log` receives the decisions of filters with debug on. */
export function applyBoxFilters<T extends FilterBox>(filters: readonly BoxFilter[], boxes: readonly T[], frame: { width: number; height: number }, log?: (msg: string, f: Record<string, unknown>) => void, debugAll = false): T[] {
  let kept = [...boxes];
  for (const f of filters) {
    kept = kept.filter((b) => {
      const ok = passes(f, b, frame);
      if (log && (f.debug || debugAll)) log("box filter", { filter: f.name || f.type, class: b.cls, box: b.box, kept: ok });
      return ok;
    });
  }
  return kept;
}
