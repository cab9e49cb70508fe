/**
 * Still images through sharp: size after EXIF orientation, and the rendered JPEG output
 * (EXIF orientation applied, metadata stripped, libjpeg defaults rather than mozjpeg).
 */
import sharp, { type Metadata } from "sharp";
import { ObscuraError } from "@/lib/errors";
import { redactPaths } from "./ffmpeg";

export interface ImageInfo {
  /** Display size, after applying the EXIF orientation. */
  width: number;
  height: number;
  format: string;
  /** EXIF orientation 1..8, null when absent. */
  orientation: number | null;
}

export async function imageInfo(file: string): Promise<ImageInfo> {
  let m: Metadata;
  try {
    m = await sharp(file).metadata();
  } catch (cause) {
    throw new ObscuraError("INVALID_ARGUMENT", `input is not a readable image (${redactPaths(errorText(cause), [file])})`, { cause });
  }
  const width = m.autoOrient?.width ?? m.width;
  const height = m.autoOrient?.height ?? m.height;
  return { width, height, format: m.format, orientation: m.orientation ?? null };
}

/** imageQuality 0..1 -> JPEG quality 1..100. */
export function imageQualityToJpeg(quality: number): number {
  if (!Number.isFinite(quality)) throw new ObscuraError("INVALID_ARGUMENT", `imageQuality must be a number between 0 and 1, not ${quality}`);
  return Math.min(100, Math.max(1, Math.round(quality * 100)));
}

export async function renderImageJpeg(input: string, output: string, opts: { quality: number }): Promise<void> {
  const quality = imageQualityToJpeg(opts.quality);
  try {
    // Transparent areas (PNG, GIF, WebP) become white rather than libvips' default black.
    await sharp(input).rotate().flatten({ background: "#ffffff" }).jpeg({ quality, mozjpeg: false }).toFile(output);
  } catch (cause) {
    const text = redactPaths(errorText(cause), [input, output]);
    // sharp reports unreadable inputs as "Input file/buffer ..." or "...unsupported image format".
    const badInput = /^Input|unsupported image format|corrupt|premature end/i.test(text);
    throw new ObscuraError(badInput ? "INVALID_ARGUMENT" : "INTERNAL", `could not render the image as JPEG (${text})`, { cause });
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Decodes an image upright (EXIF orientation applied) to packed RGB for the detectors. */
export async function decodeImageRgb(file: string): Promise<{ data: Uint8Array; width: number; height: number }> {
  try {
    const { data, info } = await sharp(file).rotate().flatten({ background: "#ffffff" }).toColourspace("srgb").raw().toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`expected 3 channels, got ${info.channels}`);
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
  } catch (cause) {
    throw new ObscuraError("INVALID_ARGUMENT", `input is not a readable image (${redactPaths(errorText(cause), [file])})`, { cause });
  }
}
