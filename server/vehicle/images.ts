/**
 * Images for the annotation APIs: base64 content or an http(s) URL (with the storage layer's
 * redirect, timeout and OBSCURA_HTTP_DENY address rules), JPG and PNG only, within the limits of
 * docs/vehicle-api.md#limits, decoded upright to RGB.
 */
import sharp from "sharp";
import { ObscuraError } from "@/lib/errors";
import { readBytes } from "../storage";
import type { RgbImage } from "../vision/types";

export interface AnnotateLimits {
  /** Items in one v11 request. */
  items: number;
  /** Bytes of one image (decoded content or downloaded). */
  imageBytes: number;
  /** Pixels of one image. */
  pixels: number;
  /** Bytes of a whole request body. */
  bodyBytes: number;
}

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new ObscuraError("FAILED_PRECONDITION", `${name} must be a whole number above 0, got ${JSON.stringify(raw)}`);
  return n;
}

export function annotateLimits(): AnnotateLimits {
  return {
    items: intEnv("OBSCURA_ANNOTATE_MAX_ITEMS", 16),
    imageBytes: intEnv("OBSCURA_ANNOTATE_MAX_IMAGE_BYTES", 10 * 1024 * 1024),
    pixels: intEnv("OBSCURA_ANNOTATE_MAX_PIXELS", 40_000_000),
    bodyBytes: intEnv("OBSCURA_ANNOTATE_MAX_BODY_BYTES", 64 * 1024 * 1024),
  };
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Base64 (standard or URL-safe, whitespace ignored, a data: URL prefix allowed) -> bytes. */
export function decodeBase64(field: string, text: string, maxBytes: number): Buffer {
  const body = text.replace(/^data:image\/[a-z+.-]+;base64,/i, "").replace(/\s+/g, "");
  if (!body) throw new ObscuraError("INVALID_ARGUMENT", `${field} is empty: give the image's bytes in base64`);
  if (!BASE64.test(body)) throw new ObscuraError("INVALID_ARGUMENT", `${field} is not base64: only A-Z, a-z, 0-9, +, / (or - and _) and = padding are allowed`);
  if (Math.floor((body.length * 3) / 4) > maxBytes + 3) throw new ObscuraError("RESOURCE_EXHAUSTED", `${field} holds more than the limit of ${maxBytes} bytes (OBSCURA_ANNOTATE_MAX_IMAGE_BYTES)`);
  return Buffer.from(body, body.includes("-") || body.includes("_") ? "base64url" : "base64");
}

/** Reads an http(s) image URL within the image size limit. */
export async function fetchImage(field: string, url: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ObscuraError("INVALID_ARGUMENT", `${field} is not a URL: ${JSON.stringify(url.slice(0, 200))}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new ObscuraError("INVALID_ARGUMENT", `${field} must be an http or https URL, not ${u.protocol.replace(/:$/, "")}`);
  return readBytes(url, { maxBytes, limitName: "OBSCURA_ANNOTATE_MAX_IMAGE_BYTES", signal });
}

/** Checks the format (JPG or PNG) and the pixel limit, and decodes upright to packed RGB. */
export async function decodeAnnotateImage(field: string, bytes: Buffer, limits: Pick<AnnotateLimits, "pixels" | "imageBytes">): Promise<RgbImage> {
  if (bytes.length > limits.imageBytes) throw new ObscuraError("RESOURCE_EXHAUSTED", `${field}: the image has ${bytes.length} bytes, more than the limit of ${limits.imageBytes} (OBSCURA_ANNOTATE_MAX_IMAGE_BYTES)`);
  let format: string | undefined;
  let width = 0;
  let height = 0;
  try {
    const m = await sharp(bytes, { limitInputPixels: false }).metadata();
    format = m.format;
    width = m.width ?? 0;
    height = m.height ?? 0;
  } catch {
    throw new ObscuraError("INVALID_ARGUMENT", `${field}: the bytes are not a readable image; only JPG and PNG are supported`);
  }
  if (format !== "jpeg" && format !== "png") throw new ObscuraError("INVALID_ARGUMENT", `${field}: the image is ${format ?? "of an unknown format"}; only JPG and PNG are supported`);
  if (width * height > limits.pixels) {
    throw new ObscuraError("RESOURCE_EXHAUSTED", `${field}: the image has ${width}x${height} = ${width * height} pixels, more than the limit of ${limits.pixels} (OBSCURA_ANNOTATE_MAX_PIXELS)`);
  }
  try {
    const { data, info } = await sharp(bytes, { limitInputPixels: limits.pixels }).rotate().flatten({ background: "#ffffff" }).toColourspace("srgb").raw().toBuffer({ resolveWithObject: true });
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
  } catch (e) {
    throw new ObscuraError("INVALID_ARGUMENT", `${field}: the ${format === "jpeg" ? "JPG" : "PNG"} image cannot be decoded (${(e as Error).message})`);
  }
}
