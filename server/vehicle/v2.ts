/**
 * The legacy forms (spec "Legacy preview request and response (v2)"):
 *   POST /v2/vehicle, /v2/vehicle/us, /v2/vehicle/eu   hosted preview form (X-API-Key)
 *   POST /vehicle/us, /vehicle/eu                       container form (the legacy port)
 * Request `{urlList: [one URL]}`; anything but exactly one entry is refused with 400. `/us` and
 * `/eu` read plates against that region group; `/v2/vehicle` against both. The hosted form gives
 * `vehicleType.value` as {make, model, generation, type} and a frameTimestamp; the container form
 * gives it as one space-separated string ("Toyota Camry 2012-2017", empty when unknown) unless
 * splitMakeModel is true.
 */
import crypto from "node:crypto";
import { ObscuraError, toObscuraError } from "@/lib/errors";
import type { Analysis } from "./analyze";
import { annotateLimits, decodeAnnotateImage, fetchImage } from "./images";
import { analyze, params } from "./service";

export const ENGINE_VERSION = "obscura-vehicle-1.0";

export type V2Form = "hosted" | "container";

/** Checks `{urlList: [url]}`; throws INVALID_ARGUMENT (400). */
export function parseUrlList(body: unknown): string {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw new ObscuraError("INVALID_ARGUMENT", 'the request body must be a JSON object {"urlList": ["<image URL>"]}', { details: [{ field: "(body)", problem: "must be an object" }] });
  const list = (body as { urlList?: unknown }).urlList;
  if (list === undefined) throw new ObscuraError("INVALID_ARGUMENT", 'urlList is required: {"urlList": ["<image URL>"]}', { details: [{ field: "urlList", problem: "is required" }] });
  if (!Array.isArray(list)) throw new ObscuraError("INVALID_ARGUMENT", "urlList must be an array holding exactly one image URL", { details: [{ field: "urlList", problem: "must be an array" }] });
  if (list.length !== 1) {
    throw new ObscuraError("INVALID_ARGUMENT", `urlList must hold exactly one URL, got ${list.length}; send one request per image`, { details: [{ field: "urlList", problem: `holds ${list.length} entries, exactly 1 is allowed` }] });
  }
  if (typeof list[0] !== "string" || !list[0]) throw new ObscuraError("INVALID_ARGUMENT", "urlList[0] must be an http(s) URL string", { details: [{ field: "urlList[0]", problem: "must be a URL string" }] });
  return list[0];
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;

function attribute(value: unknown, attributeScore: number, detectionScore: number) {
  return { value, attributeScore: r3(attributeScore), detectionScore: r3(detectionScore), updated: true };
}

const box = (b: { x: number; y: number; width: number; height: number }) => ({ height: Math.round(b.height), width: Math.round(b.width), x: Math.round(b.x), y: Math.round(b.y) });

/** The v2 response of one analysis (pure apart from the request id). */
export function v2Response(a: Analysis, o: { form: V2Form; url: string; sourceId: string; splitMakeModel: boolean; startedMs: number; frameMs: number; completedMs: number }) {
  const lpId = (i: number) => `lp-${i + 1}`;
  const vId = (i: number) => `vehicle-${i + 1}`;
  const ts = o.frameMs;
  const licensePlates: Record<string, unknown> = {};
  a.plates.forEach((p, i) => {
    licensePlates[lpId(i)] = {
      attributes: { lpString: attribute(p.text, p.textScore, p.detectionScore), lpRegion: attribute(p.region, p.regionScore, p.detectionScore) },
      firstFrameTimestamp: ts,
      bestDetectionTimestamp: ts,
      class: "licensePlate",
      box: box(p.box),
      detectionScore: r3(p.detectionScore),
      updated: true,
      links: p.vehicle !== null ? [{ metaClass: "vehicles", id: vId(p.vehicle) }] : [],
    };
  });
  const vehicles: Record<string, unknown> = {};
  a.vehicles.forEach((v, i) => {
    const mm = v.makeModel;
    const gen = mm.generation ? `${mm.generation.start}-${mm.generation.end}` : "";
    const value = o.form === "hosted" || o.splitMakeModel ? { make: mm.make, model: mm.model, generation: gen, type: v.vehicleClass } : [mm.make, mm.model, gen].filter(Boolean).join(" ");
    vehicles[vId(i)] = {
      attributes: { vehicleType: attribute(value, mm.score, v.score), color: attribute(v.color.value, v.color.score, v.score) },
      firstFrameTimestamp: ts,
      bestDetectionTimestamp: ts,
      class: "car",
      box: box(v.box),
      detectionScore: r3(v.score),
      updated: true,
      links: v.plate !== null ? [{ metaClass: "licensePlates", id: lpId(v.plate) }] : [],
    };
  });
  return {
    apiVersion: { major: 1, minor: 1 },
    frameDimensions: { w: a.width, h: a.height },
    frameSource: o.url,
    sourceId: o.sourceId,
    frameId: "0",
    analyticsTimestamp: o.completedMs,
    ...(o.form === "hosted" ? { frameTimestamp: o.frameMs } : {}),
    metaClasses: { licensePlates, vehicles },
    links: [] as Array<{ type: string; path: string; format: string }>,
    request_id: crypto.randomUUID(),
    engine_version: ENGINE_VERSION,
    time_analytics_start: o.startedMs / 1000,
    time_analytics_complete: o.completedMs / 1000,
  };
}

/** Answers a v2 request; `group` is "us", "eu" or "both". Image problems are 400s naming urlList[0]. */
export async function vehicleV2(body: unknown, group: "us" | "eu" | "both", form: V2Form) {
  const url = parseUrlList(body);
  const startedMs = Date.now();
  const limits = annotateLimits();
  let image;
  try {
    image = await decodeAnnotateImage("urlList[0]", await fetchImage("urlList[0]", url, limits.imageBytes), limits);
  } catch (e) {
    const err = toObscuraError(e);
    if (err.status === "INTERNAL") throw err;
    throw new ObscuraError("INVALID_ARGUMENT", err.message.startsWith("urlList[0]") ? err.message : `urlList[0]: ${err.message}`, { details: [{ field: "urlList[0]", problem: err.message }] });
  }
  const frameMs = Date.now();
  const a = await analyze(image, { vehicles: true, plates: true }, group);
  const p = params();
  return v2Response(a, { form, url, sourceId: p.sourceId, splitMakeModel: p.splitMakeModel, startedMs, frameMs, completedMs: Date.now() });
}
