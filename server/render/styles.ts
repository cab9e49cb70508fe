/**
 * From RenderConfig to what is drawn on one object: the style, shape and intensity per object type
 * (SMART's rules), and the sizes that follow from an intensity (block size, outline width,
 * mosaic noise). Pure, documented in docs/rendering.md.
 */
import type { ObjectType } from "../vision/types";
import { parseColor } from "./frame";

export type DrawStyle = "BLUR" | "PIXELATE" | "MOSAIC" | "FILL" | "OUTLINE";
export type RedactionStyle = DrawStyle | "SMART";
export type RedactionShape = "RECTANGLE" | "ELLIPSE";
export type Intensity = "LOW" | "MEDIUM" | "HIGH";

/** What a request asks for (RenderConfig's redaction fields). */
export interface StyleConfig {
  redactionStyle: RedactionStyle;
  redactionShape: RedactionShape;
  redactionIntensity: Intensity;
  /** "#RRGGBB" (FILL and OUTLINE). */
  redactionColor: string;
}

/** What is drawn on one object. */
export interface ObjectStyle {
  style: DrawStyle;
  shape: RedactionShape;
  intensity: Intensity;
  color: [number, number, number];
}

export const DEFAULT_STYLE: StyleConfig = { redactionStyle: "MOSAIC", redactionShape: "RECTANGLE", redactionIntensity: "MEDIUM", redactionColor: "#9F0500" };

/**
 * Blocks across the longer side of an object's box: the block size is max(width, height) / N
 * (never under MIN_BLOCK_PX). BLUR, PIXELATE and MOSAIC keep no detail finer than one block. At
 * MEDIUM a detected face (its box is the face x1.5) spans about 4 blocks: with 8 blocks across the
 * box, the face detector still found pixelated faces in the 640 px sample (test/render.test.ts).
 */
export const BLOCKS_ACROSS: Record<Intensity, number> = { LOW: 10, MEDIUM: 6, HIGH: 4 };
export const MIN_BLOCK_PX = 2;

export function blockSize(width: number, height: number, intensity: Intensity): number {
  return Math.max(MIN_BLOCK_PX, Math.max(width, height) / BLOCKS_ACROSS[intensity]);
}

/** MOSAIC: each tile's colour is moved by up to +-this many levels (of 255) of keyed noise. */
export const MOSAIC_NOISE: Record<Intensity, number> = { LOW: 16, MEDIUM: 24, HIGH: 32 };

/** OUTLINE width in pixels: 1 px per 360 lines of the frame (at least 1), times 1 / 2 / 3. */
export function outlineWidth(frameWidth: number, frameHeight: number, intensity: Intensity): number {
  const base = Math.max(1, Math.round(Math.min(frameWidth, frameHeight) / 360));
  return base * { LOW: 1, MEDIUM: 2, HIGH: 3 }[intensity];
}

/**
 * Soft edge of an ELLIPSE, in pixels, inside the ellipse (the edge itself is where the effect
 * fades out, so nothing inside the fade band is left fully visible): wide for BLUR, narrow for
 * the blocky styles and FILL. OUTLINE's stroke is anti-aliased instead. RECTANGLEs are hard-edged.
 */
export function featherWidth(style: DrawStyle, width: number, height: number): number {
  const m = Math.min(width, height);
  if (style === "BLUR") return Math.max(1.5, 0.12 * m);
  if (style === "OUTLINE") return 0;
  return Math.max(1, 0.04 * m);
}

const STRONGER: Record<Intensity, Intensity> = { LOW: "MEDIUM", MEDIUM: "HIGH", HIGH: "HIGH" };

/**
 * SMART: a style per object type, chosen for how the object is recognised.
 * - face, head: BLUR, ELLIPSE, one intensity step stronger than asked (MEDIUM -> HIGH): people are
 *   recognised by face shape and features, a strong soft blur hides both and looks natural.
 * - person: BLUR, ELLIPSE at the asked intensity (blocks are large anyway: 1/6 of a body).
 * - licensePlate: PIXELATE, RECTANGLE, HIGH (4 blocks along the plate: no character survives).
 * - id, document, screen: FILL with redactionColor, RECTANGLE: text and pictures of any size;
 *   a flat fill leaves nothing to read, whatever the font size.
 * - vehicle: PIXELATE, RECTANGLE at the asked intensity.
 * redactionShape is not used by SMART; redactionColor is (FILL).
 */
export function smartStyle(type: ObjectType, intensity: Intensity): Omit<ObjectStyle, "color"> {
  switch (type) {
    case "face":
    case "head":
      return { style: "BLUR", shape: "ELLIPSE", intensity: STRONGER[intensity] };
    case "person":
      return { style: "BLUR", shape: "ELLIPSE", intensity };
    case "licensePlate":
      return { style: "PIXELATE", shape: "RECTANGLE", intensity: "HIGH" };
    case "id":
    case "document":
    case "screen":
      return { style: "FILL", shape: "RECTANGLE", intensity };
    case "vehicle":
    default:
      return { style: "PIXELATE", shape: "RECTANGLE", intensity };
  }
}

export function objectStyle(config: StyleConfig, type: ObjectType): ObjectStyle {
  const color = parseColor(config.redactionColor);
  if (config.redactionStyle === "SMART") return { ...smartStyle(type, config.redactionIntensity), color };
  return { style: config.redactionStyle, shape: config.redactionShape, intensity: config.redactionIntensity, color };
}
