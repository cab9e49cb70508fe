/**
 * Still images: the detections of an image request drawn on the upright RGB pixels, written as a
 * JPG (metadata stripped) at imageQuality.
 */
import { randomBytes } from "node:crypto";
import sharp from "sharp";
import { ObscuraError } from "@/lib/errors";
import type { Box } from "@/lib/geometry";
import { imageQualityToJpeg } from "../media/image";
import type { ObjectType, RgbImage } from "../vision/types";
import { redactFrame, type RedactObject } from "./draw";
import { rgbFrame } from "./frame";
import { DEFAULT_STYLE, objectStyle, type StyleConfig } from "./styles";

/** A fresh secret for one render: MOSAIC keys are derived from it and never stored. */
export function renderKey(): number {
  return randomBytes(4).readUInt32LE(0);
}

/** The key of object `id` (track id, or index in an image) under a render key. */
export function objectKey(key: number, id: number): number {
  let h = (key ^ Math.imul(id + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Redacts an upright RGB image in place. */
export function redactImage(image: RgbImage, objects: readonly { type: ObjectType; box: Box }[], config: StyleConfig = DEFAULT_STYLE, key = renderKey()): void {
  const frame = rgbFrame(image.data, image.width, image.height);
  const list: RedactObject[] = objects.map((o, i) => ({ box: o.box, style: objectStyle(config, o.type), key: objectKey(key, i) }));
  redactFrame(frame, list);
}

/** Redacts `image` (in place) and writes it as a JPG at imageQuality (0..1). */
export async function renderRedactedJpeg(
  image: RgbImage,
  objects: readonly { type: ObjectType; box: Box }[],
  output: string,
  opts: { quality: number; style?: StyleConfig },
): Promise<void> {
  redactImage(image, objects, opts.style ?? DEFAULT_STYLE);
  try {
    await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
      .jpeg({ quality: imageQualityToJpeg(opts.quality), mozjpeg: false })
      .toFile(output);
  } catch (cause) {
    throw new ObscuraError("INTERNAL", `could not write the redacted JPG (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
  }
}
