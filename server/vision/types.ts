/** What every detector offers and returns. Boxes are in pixels of the image given to it. */
import type { Box } from "@/lib/geometry";
import { OBJECT_TYPES } from "@/lib/api/session";

export { OBJECT_TYPES };
export type ObjectType = (typeof OBJECT_TYPES)[number];

export interface Detection {
  type: ObjectType;
  score: number;
  box: Box;
  /** The model's own class name when it says more than `type` (e.g. "car", "tv", "book"). */
  label?: string;
}

/** An image as packed RGB bytes (3 bytes per pixel, row-major, no padding). */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

export interface DetectOptions {
  /** Scores below this are dropped. */
  threshold: number;
  /**
   * Faces of this image at a threshold, for detectors built on faces (heads, ID cards): set by
   * the engine so that they share the one face run of the call, with whichever face detector is
   * in effect (a video schedule's, for one). Without it they run the process's face detector.
   */
  faces?: (threshold: number) => Promise<Detection[]>;
}

export interface Detector {
  /** Registry name, e.g. "blazeface-back". */
  readonly name: string;
  readonly types: readonly ObjectType[];
  detect(image: RgbImage, opts: DetectOptions): Promise<Detection[]>;
}
