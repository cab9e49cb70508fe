/** Every TF op the converter translates, by TF op name. */
import type { Translator } from "../context";
import { convOps } from "./conv";
import { mathOps } from "./math";
import { reduceOps } from "./reduce";
import { shapeOps } from "./shape";
import { sliceOps } from "./slice";

export const TRANSLATORS: Readonly<Record<string, Translator>> = { ...convOps, ...mathOps, ...shapeOps, ...sliceOps, ...reduceOps };

/** Handled by the driver itself rather than a translator. */
export const DRIVER_OPS = ["Const", "Placeholder"] as const;

export function supportedOps(): string[] {
  return [...DRIVER_OPS, ...Object.keys(TRANSLATORS)].sort();
}
