/**
 * POST /v11/images:annotate (spec "Annotate request (v11)" and "Annotate response (v11)").
 *
 * The request as a whole must be a JSON object with a non-empty `requests` array of at most
 * OBSCURA_ANNOTATE_MAX_ITEMS items, or it is refused with 400. Everything inside an item is that
 * item's business: a missing image, an unknown feature, an unreadable URL, a GIF... answer the
 * item's own `error {code, message}` (google.rpc codes) while the other items are annotated.
 * docs/vehicle-api.md shows every field.
 */
import { ObscuraError, toObscuraError } from "@/lib/errors";
import type { Box } from "@/lib/geometry";
import type { Analysis } from "./analyze";
import { annotateLimits, decodeAnnotateImage, decodeBase64, fetchImage } from "./images";
import { analyze } from "./service";

export const FEATURE_TYPES = ["VEHICLE_DETECTION", "LICENSE_PLATE_DETECTION"] as const;

/** Knowledge-graph ids (as Open Images uses them) and descriptions of what we annotate. */
export const MIDS = {
  licensePlate: { mid: "/m/01jfm_", description: "Vehicle registration plate" },
  car: { mid: "/m/0k4j", description: "car" },
  bus: { mid: "/m/01bjv", description: "bus" },
  truck: { mid: "/m/07r04", description: "truck" },
  motorbike: { mid: "/m/04_sv", description: "motorbike" },
} as const;

interface Vertex {
  x: number;
  y: number;
}
export interface BoundingPoly {
  vertices: Vertex[];
  normalizedVertices: Vertex[];
}

export interface ItemError {
  code: number;
  message: string;
}

export interface AnnotateResponseItem {
  licenseplateAnnotations: unknown[];
  vehicleAnnotations: unknown[];
  error?: ItemError;
}

const describe = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "string" ? JSON.stringify(v.length > 60 ? v.slice(0, 60) + "…" : v) : typeof v === "object" ? "an object" : String(v));

/** Checks the request's outer shape; returns its items. Throws INVALID_ARGUMENT (400). */
export function requestItems(body: unknown, maxItems: number): unknown[] {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw new ObscuraError("INVALID_ARGUMENT", `the request body must be a JSON object {"requests": [...]}, got ${describe(body)}`, { details: [{ field: "(body)", problem: "must be an object" }] });
  const requests = (body as { requests?: unknown }).requests;
  if (requests === undefined) throw new ObscuraError("INVALID_ARGUMENT", 'requests is required: an array of {"image": ..., "features": [...]}', { details: [{ field: "requests", problem: "is required" }] });
  if (!Array.isArray(requests)) throw new ObscuraError("INVALID_ARGUMENT", `requests must be an array, got ${describe(requests)}`, { details: [{ field: "requests", problem: "must be an array" }] });
  if (!requests.length) throw new ObscuraError("INVALID_ARGUMENT", "requests must hold at least one item", { details: [{ field: "requests", problem: "is empty" }] });
  if (requests.length > maxItems) {
    throw new ObscuraError("INVALID_ARGUMENT", `requests holds ${requests.length} items; at most ${maxItems} are allowed per call (OBSCURA_ANNOTATE_MAX_ITEMS)`, { details: [{ field: "requests", problem: `more than ${maxItems} items` }] });
  }
  const extra = Object.keys(body).filter((k) => k !== "requests");
  if (extra.length) throw new ObscuraError("INVALID_ARGUMENT", `unknown field ${extra[0]} in the request body; only requests is allowed`, { details: [{ field: extra[0]!, problem: "is not a field of the annotate request" }] });
  return requests;
}

interface ParsedItem {
  image: { content: string } | { imageUri: string };
  features: { vehicles: boolean; plates: boolean; maxVehicles: number; maxPlates: number };
}

const bad = (field: string, problem: string) => new ObscuraError("INVALID_ARGUMENT", `${field} ${problem}`, { details: [{ field, problem }] });

/** Checks one item; throws INVALID_ARGUMENT naming the field (the item's error). */
export function parseItem(item: unknown, i: number): ParsedItem {
  const at = `requests[${i}]`;
  if (item === null || typeof item !== "object" || Array.isArray(item)) throw bad(at, `must be an object {"image": ..., "features": [...]}, got ${describe(item)}`);
  const { image, features, ...rest } = item as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown && unknown !== "imageContext") throw bad(`${at}.${unknown}`, "is not a field of a request item; allowed: image, features");
  if (image === undefined) throw bad(`${at}.image`, 'is required: {"content": base64} or {"source": {"imageUri": URL}}');
  if (image === null || typeof image !== "object" || Array.isArray(image)) throw bad(`${at}.image`, `must be an object, got ${describe(image)}`);
  const { content, source } = image as Record<string, unknown>;
  let parsedImage: ParsedItem["image"];
  if (content !== undefined && source !== undefined) throw bad(`${at}.image`, "must give either content or source.imageUri, not both");
  if (content !== undefined) {
    if (typeof content !== "string") throw bad(`${at}.image.content`, `must be a base64 string, got ${describe(content)}`);
    parsedImage = { content };
  } else if (source !== undefined) {
    if (source === null || typeof source !== "object" || Array.isArray(source)) throw bad(`${at}.image.source`, `must be an object {"imageUri": URL}, got ${describe(source)}`);
    const uri = (source as Record<string, unknown>).imageUri;
    if (typeof uri !== "string" || !uri) throw bad(`${at}.image.source.imageUri`, `must be an http(s) URL string, got ${describe(uri)}`);
    parsedImage = { imageUri: uri };
  } else throw bad(`${at}.image`, "must give content (base64) or source.imageUri");
  if (features === undefined) throw bad(`${at}.features`, `is required: an array of {"type": ${FEATURE_TYPES.join(" | ")}}`);
  if (!Array.isArray(features) || !features.length) throw bad(`${at}.features`, `must be a non-empty array of {"type": ${FEATURE_TYPES.join(" | ")}}, got ${describe(features)}`);
  const f: ParsedItem["features"] = { vehicles: false, plates: false, maxVehicles: Infinity, maxPlates: Infinity };
  features.forEach((feat, k) => {
    const ff = `${at}.features[${k}]`;
    if (feat === null || typeof feat !== "object" || Array.isArray(feat)) throw bad(ff, `must be an object {"type": ...}, got ${describe(feat)}`);
    const { type, maxResults } = feat as Record<string, unknown>;
    if (typeof type !== "string" || !(FEATURE_TYPES as readonly string[]).includes(type)) throw bad(`${ff}.type`, `must be one of ${FEATURE_TYPES.join(", ")}, got ${describe(type)}`);
    let max = Infinity;
    if (maxResults !== undefined) {
      if (typeof maxResults !== "number" || !Number.isInteger(maxResults) || maxResults < 1) throw bad(`${ff}.maxResults`, `must be a whole number of at least 1, got ${describe(maxResults)}`);
      max = maxResults;
    }
    if (type === "VEHICLE_DETECTION") [f.vehicles, f.maxVehicles] = [true, Math.min(f.maxVehicles, max)];
    else [f.plates, f.maxPlates] = [true, Math.min(f.maxPlates, max)];
  });
  return { image: parsedImage, features: f };
}

function poly(b: { quad?: ReadonlyArray<readonly [number, number]>; box: Box }, width: number, height: number): BoundingPoly {
  const pts: ReadonlyArray<readonly [number, number]> = b.quad ?? [
    [b.box.x, b.box.y],
    [b.box.x + b.box.width, b.box.y],
    [b.box.x + b.box.width, b.box.y + b.box.height],
    [b.box.x, b.box.y + b.box.height],
  ];
  const cx = (v: number) => Math.min(width, Math.max(0, v));
  const cy = (v: number) => Math.min(height, Math.max(0, v));
  const r4 = (v: number) => Math.round(v * 10_000) / 10_000;
  return {
    vertices: pts.map(([x, y]) => ({ x: Math.round(cx(x)), y: Math.round(cy(y)) })),
    normalizedVertices: pts.map(([x, y]) => ({ x: r4(cx(x) / width), y: r4(cy(y) / height) })),
  };
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;

/** The v11 annotations of one analysis (item `index` of the response, for the `$ref` pointers). */
export function v11Annotations(a: Analysis & { locale: string }, index: number, f: ParsedItem["features"]): AnnotateResponseItem {
  const plates = f.plates ? a.plates.slice(0, f.maxPlates) : [];
  const vehicles = f.vehicles ? a.vehicles.slice(0, f.maxVehicles) : [];
  const licenseplateAnnotations = plates.map((p) => ({
    string: { value: p.text, score: r3(p.textScore) },
    region: { value: p.region, score: r3(p.regionScore) },
    boundingPoly: poly(p, a.width, a.height),
    locale: a.locale,
    score: r3(p.score),
    ...MIDS.licensePlate,
  }));
  const vehicleAnnotations = vehicles.map((v) => {
    const mm = v.makeModel;
    const plateIndex = v.plate !== null && v.plate < plates.length ? v.plate : -1;
    return {
      make: { value: mm.make, score: r3(mm.make ? mm.score : 0) },
      model: { value: mm.model, score: r3(mm.model ? mm.score : 0) },
      generation: { value: mm.generation, score: r3(mm.generation ? mm.score : 0) },
      color: { value: v.color.value, score: r3(v.color.score) },
      ...(plateIndex >= 0 ? { licenseplate: { $ref: `#/responses/${index}/licenseplateAnnotations/${plateIndex}` } } : {}),
      boundingPoly: poly(v, a.width, a.height),
      locale: a.locale,
      score: r3(v.score),
      ...MIDS[v.vehicleClass],
    };
  });
  return { licenseplateAnnotations, vehicleAnnotations };
}

/** Loads an item's image: the content's bytes or the URL's. */
export async function itemImageBytes(image: ParsedItem["image"], field: string, maxBytes: number): Promise<Buffer> {
  return "content" in image ? decodeBase64(`${field}.content`, image.content, maxBytes) : fetchImage(`${field}.source.imageUri`, image.imageUri, maxBytes);
}

/** Answers a whole annotate request (the body already parsed as JSON). */
export async function annotate(body: unknown): Promise<{ responses: AnnotateResponseItem[] }> {
  const limits = annotateLimits();
  const items = requestItems(body, limits.items);
  const responses: AnnotateResponseItem[] = [];
  for (let i = 0; i < items.length; i++) {
    try {
      const item = parseItem(items[i], i);
      const field = `requests[${i}].image`;
      const bytes = await itemImageBytes(item.image, field, limits.imageBytes);
      const image = await decodeAnnotateImage(field, bytes, limits);
      const a = await analyze(image, { vehicles: item.features.vehicles, plates: item.features.plates }, "configured");
      responses.push(v11Annotations(a, i, item.features));
    } catch (e) {
      const err = toObscuraError(e);
      if (err.status === "INTERNAL" || err.status === "UNKNOWN") throw err; // our fault, not the item's: 500 for the call
      responses.push({ licenseplateAnnotations: [], vehicleAnnotations: [], error: { code: err.code, message: err.message } });
    }
  }
  return { responses };
}
