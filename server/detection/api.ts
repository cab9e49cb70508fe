/**
 * POST /v1/detections (spec: the Detection API of sensor-data-and-detection-api.md;
 * docs/detection-api.md): people and faces in one image, faces optionally with gender, age,
 * emotion, pose and 68 landmarks.
 *
 * Order of checks: method (405) and path (406) before anything else; then X-Access-Token (401)
 * and its monthly quota (403, the call is counted); then the query (400), the Content-Type (415),
 * the body within 10 MB (413, counted while it streams), the image (400 unreadable, 415 not
 * JPEG/GIF/PNG), then the engine's queue (502 when full or when the models cannot load).
 *
 * People: the COCO detector's persons (>= 0.3) and MoveNet MultiPose's (>= 0.25; it finds the
 * close-up, head-and-shoulders people COCO scores low), one box per person (NMS at IoU 0.5).
 * Faces: the engine's fused face detector at 0.5, boxes as detected (not expanded); faces of
 * 40 px and more that score under 0.95 are checked by FaceMesh's face-presence output (>= 0.1).
 */
import sharp, { type Metadata } from "sharp";
import { isObscuraError } from "@/lib/errors";
import { type Box, nms } from "@/lib/geometry";
import { movenetPoses } from "../vision/heads";
import { authenticateAccessToken } from "../auth/bearer";
import { readBodyBytes } from "../http/respond";
import { log } from "../log";
import { readBytes } from "../storage";
import { detectImage } from "../vision/engine";
import { FaceDetector } from "../vision/faces";
import type { RgbImage } from "../vision/types";
import { facemeshScores } from "../vision/face-verify";
import { FACE_OPTIONS, type FaceAttributes, type FaceOption, faceAttributes, MIN_FACE } from "./attributes";

export const DETECTION_TYPES = ["all", "face", "person"] as const;
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
export const MAX_WIDTH = 1920;
export const MAX_HEIGHT = 1080;

/** Faces: the engine's fused detector at this score... */
export const FACE_THRESHOLD = 0.5;
/** ...kept when FaceMesh sees a face in the box (>= 40 px) at least this much, or the detectors are this sure. */
export const FACE_PRESENCE_MIN = 0.1;
export const FACE_SURE = 0.95;
/** People: the COCO detector's person class at this score, and MoveNet's poses at this one (close-ups COCO scores low). */
export const PERSON_THRESHOLD = 0.3;
export const POSE_THRESHOLD = 0.25;

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  500: "Internal Server Error",
  502: "Bad Gateway",
};

/** An error of the Detection API: its HTTP status and reasonCode (status x 100 + our id; docs/detection-api.md). */
export class DetectionError extends Error {
  constructor(
    readonly status: number,
    readonly reasonCode: number,
    readonly reason: string,
    readonly details?: { statusCode?: number; statusMessage?: string; body?: string },
  ) {
    super(reason);
  }
}

export function errorBody(e: DetectionError) {
  return { error: STATUS_TEXT[e.status] ?? "Error", reason: e.reason, reasonCode: e.reasonCode, ...(e.details ? { details: e.details } : {}) };
}

export function detectionErrorResponse(e: unknown): Response {
  let err: DetectionError;
  if (e instanceof DetectionError) err = e;
  else {
    log.error("detection failed", { error: e instanceof Error ? e.message : String(e) });
    err = new DetectionError(500, 50001, "detection failed on an unexpected condition; see the server log");
  }
  return new Response(JSON.stringify(errorBody(err)), { status: err.status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...(err.status === 405 ? { allow: "POST" } : {}) } });
}

export interface DetectionQuery {
  types: Set<"face" | "person">;
  faceOptions: Set<FaceOption>;
}

function listParam(raw: string | null, name: string, allowed: readonly string[], code: number): string[] | null {
  if (raw === null) return null;
  const values = raw.split(",").map((v) => v.trim().toLowerCase());
  const bad = values.find((v) => !allowed.includes(v));
  if (bad !== undefined) throw new DetectionError(400, code, `invalid ${name} value ${JSON.stringify(bad)}; allowed: ${allowed.join(", ")} (a comma-separated list)`);
  return values;
}

/** `type` and `faceOption` of the query string. */
export function parseQuery(url: URL): DetectionQuery {
  const types = listParam(url.searchParams.get("type"), "type", DETECTION_TYPES, 40001) ?? ["all"];
  const options = listParam(url.searchParams.get("faceOption"), "faceOption", FACE_OPTIONS, 40002) ?? [];
  const t = new Set<"face" | "person">();
  for (const v of types) {
    if (v === "all" || v === "face") t.add("face");
    if (v === "all" || v === "person") t.add("person");
  }
  return { types: t, faceOptions: new Set(options as FaceOption[]) };
}

/** The token's 401 and the quota's 403, with their reason codes. */
export async function authorize(req: Request): Promise<void> {
  try {
    await authenticateAccessToken(req);
  } catch (e) {
    if (!isObscuraError(e)) throw e;
    if (e.status === "PERMISSION_DENIED") throw new DetectionError(403, 40301, e.message);
    const code = /missing/.test(e.message) ? 40101 : /revoked/.test(e.message) ? 40103 : /this is an? /.test(e.message) ? 40104 : 40102;
    throw new DetectionError(401, code, e.message);
  }
}

const tooLarge = (what: string) => new DetectionError(413, 41301, `${what} is larger than the limit of ${MAX_IMAGE_BYTES} bytes (10 MB)`);

/** Reads a request body, failing with 413 as soon as it passes `max` bytes. */
const readBody = (req: Request, max: number, what: string) => readBodyBytes(req, max, () => tooLarge(what));

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** The image's bytes from either body form. */
export async function imageBytes(req: Request): Promise<Buffer> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/octet-stream") {
    const bytes = await readBody(req, MAX_IMAGE_BYTES, "the image");
    if (!bytes.length) throw new DetectionError(400, 40004, "the body is empty: send the image's bytes");
    return bytes;
  }
  if (type !== "application/json") {
    throw new DetectionError(415, 41501, `Content-Type must be application/json ({"image": URL or base64}) or application/octet-stream (the image's bytes), not ${JSON.stringify(type || "(none)")}`);
  }
  // base64 of 10 MB is ~13.4 MB: the JSON body may be that large, the image not
  const text = (await readBody(req, Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + 64 * 1024, "the image")).toString("utf8");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new DetectionError(400, 40003, `the body is not valid JSON: ${(e as Error).message}`);
  }
  const image = body && typeof body === "object" && !Array.isArray(body) ? (body as { image?: unknown }).image : undefined;
  if (typeof image !== "string" || !image.trim()) throw new DetectionError(400, 40004, 'the body must be {"image": "<http(s) URL or base64 data>"}');
  const value = image.trim();
  if (/^https?:\/\//i.test(value)) return fetchImage(value);
  const data = value.replace(/^data:[a-z]+\/[a-z0-9.+-]+;base64,/i, "").replace(/\s+/g, "");
  if (!BASE64.test(data)) throw new DetectionError(400, 40005, "image is neither an http(s) URL nor base64 data");
  const bytes = Buffer.from(data, data.includes("-") || data.includes("_") ? "base64url" : "base64");
  if (bytes.length > MAX_IMAGE_BYTES) throw tooLarge("the image");
  return bytes;
}

async function fetchImage(url: string): Promise<Buffer> {
  try {
    return await readBytes(url, { maxBytes: MAX_IMAGE_BYTES, limitName: "10 MB" });
  } catch (e) {
    if (!isObscuraError(e)) throw e;
    if (e.status === "RESOURCE_EXHAUSTED") throw tooLarge("the image at the URL");
    const m = /answered HTTP (\d+)/.exec(e.message);
    throw new DetectionError(400, 40006, `the image URL could not be read: ${e.message}`, m ? { statusCode: Number(m[1]), statusMessage: e.message } : undefined);
  }
}

export interface DecodedImage {
  image: RgbImage;
  orientation: number;
}

/** JPEG, GIF (first frame) or PNG; EXIF orientation applied; scaled down to fit 1920x1080. */
export async function decodeImage(bytes: Buffer): Promise<DecodedImage> {
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: 100_000_000 }).metadata();
  } catch {
    throw new DetectionError(415, 41502, "the data is not an image in a supported format: JPEG, GIF or PNG");
  }
  if (meta.format !== "jpeg" && meta.format !== "png" && meta.format !== "gif") throw new DetectionError(415, 41502, `the image is ${meta.format}; supported formats are JPEG, GIF and PNG`);
  try {
    const { data, info } = await sharp(bytes, { limitInputPixels: 100_000_000, pages: 1 })
      .rotate()
      .resize({ width: MAX_WIDTH, height: MAX_HEIGHT, fit: "inside", withoutEnlargement: true })
      .flatten({ background: "#ffffff" })
      .toColourspace("srgb")
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { image: { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height }, orientation: meta.orientation ?? 1 };
  } catch (e) {
    throw new DetectionError(400, 40007, `the ${meta.format} image cannot be decoded (${(e as Error).message})`);
  }
}

/**
 * The face detector of this API: the redaction engine's fused detector without its small-face
 * passes (FaceBoxes at 1x, SSD on the whole image and 2x2 tiles, no BlazeFace tiles). The API's
 * smallest face is 40 px; on face-api's sample photos it finds the same faces as the full
 * detector in about a fifth of the time.
 */
export function apiFaceDetector(): FaceDetector {
  const g = globalThis as { [FACE_KEY]?: FaceDetector };
  return (g[FACE_KEY] ??= new FaceDetector({
    passes: [{ scale: 1, minFace: 16, maxFace: 100000, reference: 0.3 }],
    ssd: [
      { across: 1, overlap: 0.25 },
      { across: 2, overlap: 0.25 },
    ],
    blazeface: { tile: 0 },
  }));
}
const FACE_KEY = Symbol.for("obscura.detection.faceDetector");

export interface DetectedObject {
  type: "face" | "person";
  boundingBox: { x: number; y: number; width: number; height: number };
  attributes?: FaceAttributes;
}

const whole = (b: Box) => {
  const x = Math.max(0, Math.round(b.x));
  const y = Math.max(0, Math.round(b.y));
  return { x, y, width: Math.max(1, Math.round(b.x + b.width) - x), height: Math.max(1, Math.round(b.y + b.height) - y) };
};

/** People and faces of a decoded image, with the face attributes asked for. */
export async function detectObjects(image: RgbImage, q: DetectionQuery): Promise<DetectedObject[]> {
  const features = [...(q.types.has("person") ? ["PERSON_DETECTION"] : []), ...(q.types.has("face") ? ["FACE_DETECTION"] : [])];
  const found = await detectImage(image, features, { objectsConfidenceThreshold: PERSON_THRESHOLD, innerObjectsConfidenceThreshold: FACE_THRESHOLD, faceBoxExpansionFactor: 1 }, { detectors: { "faces-faceboxes": apiFaceDetector() } });
  const poses = q.types.has("person") ? (await movenetPoses(image)).filter((p) => p.score >= POSE_THRESHOLD).map((p) => ({ type: "person" as const, score: p.score, box: p.box })) : [];
  const people = nms([...found.filter((d) => d.type === "person"), ...poses].sort((a, b) => b.score - a.score), 0.5);
  let faces = found.filter((d) => d.type === "face").sort((a, b) => b.score - a.score);
  // FaceMesh's face presence weeds out face-like things (patterns, glasses, clothing) among boxes it can judge
  const judged = faces.filter((f) => f.box.width >= MIN_FACE && f.box.height >= MIN_FACE && f.score < FACE_SURE);
  const presence = await facemeshScores(image, judged.map((f) => f.box), { cropFactor: 1.5, batch: 16 });
  const rejected = new Set(judged.filter((_, i) => presence[i]! < FACE_PRESENCE_MIN));
  faces = faces.filter((f) => !rejected.has(f));
  const attrs = await faceAttributes(image, faces.map((f) => f.box), q.faceOptions);
  return [
    ...people.map((p) => ({ type: "person" as const, boundingBox: whole(p.box) })),
    ...faces.map((f, i) => ({ type: "face" as const, boundingBox: whole(f.box), ...(q.faceOptions.size && attrs[i] ? { attributes: attrs[i]! } : {}) })),
  ];
}

// ---------------------------------------------------------------------------------------------
// The engine's queue: one detection at a time per process, a bounded line behind it.

interface Queue {
  running: number;
  waiting: Array<() => void>;
}
const KEY = Symbol.for("obscura.detection.queue");
const queue = (): Queue => ((globalThis as { [KEY]?: Queue })[KEY] ??= { running: 0, waiting: [] });

function limits() {
  const n = (name: string, d: number) => {
    const v = Number(process.env[name]);
    return Number.isInteger(v) && v > 0 ? v : d;
  };
  return { concurrency: n("OBSCURA_DETECT_CONCURRENCY", 1), queue: n("OBSCURA_DETECT_QUEUE", 16) };
}

export async function inTurn<T>(f: () => Promise<T>): Promise<T> {
  const q = queue();
  const l = limits();
  if (q.running >= l.concurrency) {
    if (q.waiting.length >= l.queue) throw new DetectionError(502, 50201, `the detection service is busy (${q.running} running, ${q.waiting.length} waiting; OBSCURA_DETECT_QUEUE=${l.queue}); retry shortly`);
    await new Promise<void>((r) => q.waiting.push(r));
  } else q.running++;
  try {
    return await f();
  } finally {
    const next = q.waiting.shift();
    if (next) next();
    else q.running--;
  }
}

/** The whole request. */
export async function handleDetection(req: Request): Promise<Response> {
  try {
    await authorize(req);
    const q = parseQuery(new URL(req.url));
    const bytes = await imageBytes(req);
    const { image, orientation } = await decodeImage(bytes);
    const objects = await inTurn(async () => {
      try {
        return await detectObjects(image, q);
      } catch (e) {
        if (e instanceof DetectionError) throw e;
        if (isObscuraError(e) && e.status === "FAILED_PRECONDITION") throw new DetectionError(502, 50202, `the detection engine is not ready: ${e.message}`);
        throw e;
      }
    });
    return new Response(JSON.stringify({ image: { width: image.width, height: image.height, orientation }, objects }), {
      status: 200,
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
    });
  } catch (e) {
    return detectionErrorResponse(e);
  }
}

export function methodNotAllowed(): Response {
  return detectionErrorResponse(new DetectionError(405, 40501, "invalid method; only POST is supported on /v1/detections"));
}

export function unknownPath(req: Request): Response {
  return detectionErrorResponse(new DetectionError(406, 40601, `invalid request path ${new URL(req.url).pathname}; the Detection API is POST /v1/detections`));
}
