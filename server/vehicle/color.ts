/**
 * A vehicle's colour from its own pixels (docs/vehicle-api.md#colour). The body panels fill the
 * middle of a vehicle's box, below the windows: that part is sampled on a grid, each pixel named
 * by hue, saturation and brightness, and the most frequent name wins. Glass, tyres and shadows are
 * dark and grey, so coloured pixels count 1.5x. The score is the winner's share of the (weighted)
 * samples: a plain red car scores near 1, a two-tone or shadowed one less.
 *
 * Names: black, white, gray, silver, red, orange, yellow, green, blue, purple, brown, beige.
 */
import type { Box } from "@/lib/geometry";
import type { RgbImage } from "../vision/types";

export const COLOR_NAMES = ["black", "white", "gray", "silver", "red", "orange", "yellow", "green", "blue", "purple", "brown", "beige"] as const;
export type ColorName = (typeof COLOR_NAMES)[number];

/** The colour name of one pixel (pure). */
export function colorName(r: number, g: number, b: number): ColorName {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const v = max / 255;
  const s = max === 0 ? 0 : (max - min) / max;
  if (v < 0.2) return "black";
  if (s < 0.16 || (v < 0.35 && s < 0.3)) {
    if (v > 0.82) return "white";
    if (v > 0.56) return "silver";
    if (v > 0.28) return "gray";
    return "black";
  }
  let h = 0;
  const d = max - min;
  if (max === r) h = ((g - b) / d) % 6;
  else if (max === g) h = (b - r) / d + 2;
  else h = (r - g) / d + 4;
  h *= 60;
  if (h < 0) h += 360;
  if (h >= 18 && h < 50 && s < 0.38 && v > 0.6) return "beige";
  if (h >= 12 && h < 45 && v < 0.6) return "brown";
  if (h < 12 || h >= 340) return "red";
  if (h < 40) return "orange";
  if (h < 68) return "yellow";
  if (h < 165) return "green";
  if (h < 255) return "blue";
  return "purple";
}

const CHROMATIC_WEIGHT = 1.5;

/** The vehicle's colour and the winner's share of the samples. */
export function vehicleColor(image: RgbImage, box: Box): { value: ColorName; score: number } {
  const x0 = Math.max(0, Math.floor(box.x + box.width * 0.15));
  const x1 = Math.min(image.width, Math.ceil(box.x + box.width * 0.85));
  const y0 = Math.max(0, Math.floor(box.y + box.height * 0.35));
  const y1 = Math.min(image.height, Math.ceil(box.y + box.height * 0.8));
  const counts = new Map<ColorName, number>();
  let total = 0;
  const step = Math.max(1, Math.floor(Math.sqrt(((x1 - x0) * (y1 - y0)) / 4000)));
  for (let y = y0; y < y1; y += step) {
    for (let x = x0; x < x1; x += step) {
      const i = (y * image.width + x) * 3;
      const name = colorName(image.data[i]!, image.data[i + 1]!, image.data[i + 2]!);
      const w = name === "black" || name === "white" || name === "gray" || name === "silver" ? 1 : CHROMATIC_WEIGHT;
      counts.set(name, (counts.get(name) ?? 0) + w);
      total += w;
    }
  }
  if (!total) return { value: "gray", score: 0 };
  const [value, n] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
  return { value, score: n / total };
}
