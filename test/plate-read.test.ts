/**
 * Plate reading (server/vision/plate-read.ts): restricted greedy CTC and quad rectification as
 * pure functions, and the real PP-OCRv4 networks on plates drawn by the test (SVG text rendered
 * by sharp with the DejaVu font): level and tilted.
 */
import { describe, expect, it } from "vitest";
import sharp from "sharp";
import { ctcDecode, readPlate, rectify } from "@/server/vision/plate-read";

/** A grey scene with a white plate carrying `text`, rotated by `deg` about its centre. */
async function plateScene(text: string, deg = 0) {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="260"><rect width="480" height="260" fill="#6b6f75"/>
<g transform="rotate(${deg} 240 130)"><rect x="120" y="90" width="240" height="80" rx="8" fill="#f4f4f0" stroke="#222" stroke-width="4"/>
<text x="240" y="113" font-family="DejaVu Sans, sans-serif" font-size="12" text-anchor="middle" fill="#a00">CALIFORNIA</text>
<text x="240" y="155" font-family="DejaVu Sans, sans-serif" font-weight="bold" font-size="44" text-anchor="middle" fill="#111">${text}</text></g></svg>`;
  const { data, info } = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height };
}

describe("plate reading", () => {
  it("decodes CTC over the allowed characters only, merging repeats and dropping blanks", () => {
    // classes: 0 blank, 1 'A', 2 '7', 3 a character plates never hold
    const steps = [
      [0.1, 0.8, 0.05, 0.05],
      [0.1, 0.7, 0.1, 0.1],
      [0.9, 0.05, 0.05, 0],
      [0.1, 0.1, 0.2, 0.6], // the foreign character wins the raw argmax: ignored, '7' is the best allowed
      [0.9, 0.05, 0.05, 0], // a blank separates a real double letter
      [0.1, 0.1, 0.8, 0],
    ];
    const probs = new Float32Array(steps.flat());
    const out = ctcDecode(probs, steps.length, 4, new Map([[1, "A"], [2, "7"]]));
    expect(out.map((c) => c.char).join("")).toBe("A77");
    expect(out[0]!.confidence).toBeCloseTo(0.8);
  });

  it("rectifies a quad into an upright strip 48 px high", () => {
    const img = { data: new Uint8Array(100 * 50 * 3).map((_, i) => (Math.floor(i / 3) % 100 < 50 ? 0 : 255)), width: 100, height: 50 };
    const s = rectify(img, [[10, 10], [90, 10], [90, 30], [10, 30]]);
    expect(s.height).toBe(48);
    expect(s.width).toBe(192); // 80 x 20 keeps its 4:1 shape
    expect(s.data[(24 * s.width + 10) * 3]).toBe(0); // the left half is black
    expect(s.data[(24 * s.width + 180) * 3]).toBe(255); // the right half white
  });

  it("reads a drawn plate, level and tilted, ignoring the small state name", async () => {
    for (const deg of [0, 7]) {
      const r = await readPlate(await plateScene("7KQP284", deg), { x: 115, y: 70, width: 250, height: 120 });
      expect(r.text).toBe("7KQP284");
      expect(r.confidence).toBeGreaterThan(0.8);
      expect(r.chars).toHaveLength(7);
    }
  });
});
