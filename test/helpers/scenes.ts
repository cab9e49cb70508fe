/**
 * Synthetic scenes for detector tests, drawn as SVG (glyphs are strokes, so no system font is
 * needed) and rendered by sharp.
 */
import type { Box } from "@/lib/geometry";

/** Stroke glyphs in a 10 x 16 box. */
const GLYPHS: Record<string, string> = {
  "7": "M0 0 L10 0 L3 16",
  A: "M0 16 L5 0 L10 16 M2 10 L8 10",
  B: "M0 0 L0 16 L6 16 Q10 16 10 12 Q10 8 6 8 L0 8 M0 0 L5 0 Q9 0 9 4 Q9 8 5 8",
  C: "M10 2 Q8 0 5 0 Q0 0 0 8 Q0 16 5 16 Q8 16 10 14",
  "1": "M2 3 L5 0 L5 16 M2 16 L8 16",
  "2": "M0 3 Q1 0 5 0 Q10 0 10 4 Q10 7 0 16 L10 16",
  "3": "M0 1 Q3 0 5 0 Q10 0 10 4 Q10 8 5 8 Q10 8 10 12 Q10 16 5 16 Q2 16 0 15",
};

/** An 800x600 scene: plain background, a grey "car", a white plate with "7ABC123" in bold strokes. */
export function carSvg(plate: Box, tiltDegrees = 0): string {
  const text = "7ABC123";
  const advance = plate.width * 0.13;
  const x0 = plate.x + (plate.width - (text.length * advance - advance * 0.23)) / 2;
  const y0 = plate.y + plate.height * 0.3;
  const sx = advance * 0.077;
  const sy = (plate.height * 0.4) / 16;
  const glyphs = [...text].map((c, i) => `<path transform="translate(${x0 + i * advance} ${y0}) scale(${sx} ${sy})" d="${GLYPHS[c]}"/>`).join("");
  const cx = plate.x + plate.width / 2;
  const cy = plate.y + plate.height / 2;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600">
<rect width="800" height="600" fill="#b8c8d8"/>
<rect x="150" y="200" width="500" height="320" rx="30" fill="#555a60"/>
<g transform="rotate(${tiltDegrees} ${cx} ${cy})">
<rect x="${plate.x}" y="${plate.y}" width="${plate.width}" height="${plate.height}" rx="8" fill="#fff" stroke="#222" stroke-width="3"/>
<g fill="none" stroke="#000" stroke-width="${(plate.height * 0.024).toFixed(2)}" stroke-linecap="round" stroke-linejoin="round" vector-effect="non-scaling-stroke">${glyphs}</g>
</g></svg>`;
}


/** A sheet of paper with `lines` lines of stroke text, on a desk-coloured background. */
export function pageSvg(paper: Box, lines = 6): string {
  const words = ["7ABC123", "C1B2A3", "ABC 7123", "321 CBA", "B7 C2 A1", "A1B2C3 7"];
  const lineHeight = paper.height / (lines + 2);
  const glyphH = lineHeight * 0.55;
  const advance = glyphH * 0.8;
  const rows = Array.from({ length: lines }, (_, r) => {
    const text = words[r % words.length]! + " " + words[(r + 2) % words.length]!;
    const y = paper.y + lineHeight * (r + 1.2);
    return [...text]
      .map((c, i) => (GLYPHS[c] ? `<path transform="translate(${paper.x + paper.width * 0.08 + i * advance} ${y}) scale(${(advance * 0.077).toFixed(3)} ${(glyphH / 16).toFixed(3)})" d="${GLYPHS[c]}"/>` : ""))
      .join("");
  }).join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600">
<rect width="800" height="600" fill="#8a6d4b"/>
<rect x="${paper.x}" y="${paper.y}" width="${paper.width}" height="${paper.height}" fill="#fafafa"/>
<g fill="none" stroke="#111" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round">${rows}</g></svg>`;
}

/**
 * A 1280x720 desk with an ID-1-shaped card (`card`, about 1.586:1): a light card, a header line,
 * and five lines of small stroke print to the right of the portrait area `photo` (leave it for
 * a real face photo composited on top).
 */
export function idCardSvg(card: Box, photo: Box): string {
  const words = ["ABC 7123", "C1B2A3 7", "321 CBA", "B7 C2 A1", "12 3 2A1"];
  const left = photo.x + photo.width + card.width * 0.05;
  const glyphH = card.height * 0.05;
  const line = (text: string, y: number, h: number) =>
    [...text].map((c, i) => (GLYPHS[c] ? `<path transform="translate(${(left + i * h * 0.8).toFixed(1)} ${y.toFixed(1)}) scale(${(h * 0.8 * 0.077).toFixed(3)} ${(h / 16).toFixed(3)})" d="${GLYPHS[c]}"/>` : "")).join("");
  const rows = words.map((w, r) => line(w + " " + words[(r + 2) % words.length]!, photo.y + glyphH * 2.4 * (r + 1), glyphH)).join("");
  const header = line("A7 BC", card.y + card.height * 0.06, glyphH * 1.4);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="1280" height="720">
<rect width="1280" height="720" fill="#6b5a48"/>
<rect x="${card.x}" y="${card.y}" width="${card.width}" height="${card.height}" rx="${card.height * 0.06}" fill="#dfe8ef"/>
<rect x="${photo.x}" y="${photo.y}" width="${photo.width}" height="${photo.height}" fill="#9aa"/>
<g fill="none" stroke="#123" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${header}${rows}</g></svg>`;
}
