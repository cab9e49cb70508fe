/**
 * ID documents (identity cards, driving licences, passport data pages): a portrait photo with
 * lines of small print beside or below it, together card-shaped. Built from two shared runs, the
 * face detector (shared.ts) and the PP-OCRv4 text detector (text-detect.ts, the plate detector's
 * settings, so one model run serves plates, documents and IDs).
 *
 * For each face (tight box, height `f`), the card it would be printed on is about 2.6 f high
 * (ID-1 cards are 54 mm high; the portrait takes ~60% of that and the face ~65% of the portrait)
 * and 1.586 times as wide (85.6 mm). Text lines count when their height (across the line, from
 * the rotated box, so tilted cards work) is 0.05-0.45 f, the size of card print against a
 * portrait, when they are lines (at least 2.5 times as long as high) and when they lie within that
 * card window beside (left or right: landscape cards) or below the face (portrait cards). The side
 * with most lines wins; it needs at least `MIN_ID_LINES`, two of them stacked like print (similar
 * height, same column, close: a badge or a logo beside a face is not).
 * The card box is the union of the portrait (face grown to a photo) and those lines, padded, and
 * must be card-shaped (width/height 1-2.3 beside, 0.45-1 below); print rarely reaches
 * the far edge, so the text side is grown to at least the ID-1 shape. Cards found from two
 * faces (a licence's small "ghost" portrait) merge into their union.
 *
 * Score: sqrt(face score x mean line score), x0.85 with only two lines. A person next to a sign
 * is rejected by the text size (sign letters are not a tenth of a face) and the card window; a
 * name badge worn on a shirt can pass, which for redaction is the safe side.
 */
import { type Box, clip, coverage, iou } from "@/lib/geometry";
import { median } from "./documents";
import { PlateDetector } from "./plates";
import { detectFacesShared } from "./shared";
import { detectTextShared, type Point, type TextBox } from "./text-detect";
import type { DetectOptions, Detection, Detector, ObjectType, RgbImage } from "./types";

export const MIN_ID_LINES = 2;
const CARD_HEIGHT = 2.6;
const CARD_ASPECT = 1.586;

const len = (a: Point, b: Point) => Math.hypot(a[0] - b[0], a[1] - b[1]);
const union = (a: Box, b: Box): Box => {
  const x = Math.min(a.x, b.x), y = Math.min(a.y, b.y); // prettier-ignore
  return { x, y, width: Math.max(a.x + a.width, b.x + b.width) - x, height: Math.max(a.y + a.height, b.y + b.height) - y };
};

/** ID cards from faces and text lines, in image pixels (pure). */
export function idCardsFromFacesAndText(faces: readonly Detection[], lines: readonly TextBox[], width: number, height: number, threshold: number): Detection[] {
  const found: Detection[] = [];
  for (const face of faces) {
    const f = face.box;
    const fh = f.height;
    if (!(fh >= 8)) continue;
    const cx = f.x + f.width / 2;
    const cy = f.y + fh / 2;
    const cardW = CARD_HEIGHT * CARD_ASPECT * fh;
    const sides: Record<"left" | "right" | "below", TextBox[]> = { left: [], right: [], below: [] };
    for (const l of lines) {
      const lineH = len(l.quad[0], l.quad[3]);
      if (lineH < 0.05 * fh || lineH > 0.45 * fh || len(l.quad[0], l.quad[1]) < 2.5 * lineH) continue;
      const b = l.box;
      const lx = b.x + b.width / 2;
      const ly = b.y + b.height / 2;
      if (coverage(b, f) > 0.3) continue; // print on the face itself (a watermark) is not a line beside it
      const farX = Math.max(Math.abs(b.x - cx), Math.abs(b.x + b.width - cx));
      if (ly >= cy - 1.3 * fh && ly <= cy + 1.7 * fh && farX <= cardW) {
        if (lx > f.x + f.width) sides.right.push(l);
        else if (lx < f.x) sides.left.push(l);
      }
      if (ly > f.y + 1.3 * fh && ly <= f.y + 4.5 * fh && Math.abs(lx - cx) <= 1.6 * fh && farX <= 2.2 * fh) sides.below.push(l);
    }
    const side = (["right", "left", "below"] as const).reduce((best, s) => (sides[s].length > sides[best].length ? s : best), "right" as "left" | "right" | "below");
    const chosen = sides[side];
    if (chosen.length < MIN_ID_LINES || !stacked(chosen)) continue;
    const portrait: Box = { x: f.x - 0.35 * f.width, y: f.y - 0.45 * fh, width: 1.7 * f.width, height: 1.95 * fh };
    let card = chosen.reduce((acc, l) => union(acc, l.box), portrait);
    const pad = Math.max(0.2 * fh, median(chosen.map((l) => len(l.quad[0], l.quad[3]))));
    card = { x: card.x - pad, y: card.y - pad, width: card.width + 2 * pad, height: card.height + 2 * pad };
    const aspect = card.width / card.height;
    const cardShaped = side === "below" ? aspect >= 0.45 && aspect <= 1 : aspect >= 1 && aspect <= 2.3;
    if (!cardShaped) continue;
    // Print rarely reaches the card's far edge: grow the text side to at least the ID-1 shape.
    if (side === "below") card.height = Math.max(card.height, card.width * CARD_ASPECT);
    else if (card.width < card.height * CARD_ASPECT) {
      const grow = card.height * CARD_ASPECT - card.width;
      if (side === "left") card.x -= grow;
      card.width += grow;
    }
    const text = chosen.reduce((s, l) => s + l.score, 0) / chosen.length;
    const score = Math.sqrt(face.score * text) * (chosen.length >= 3 ? 1 : 0.85);
    if (score < threshold) continue;
    const box = clip(card, width, height);
    if (box.width > 0 && box.height > 0) found.push({ type: "id", score: Math.min(1, score), box, label: side === "below" ? "portrait card" : "card" });
  }
  // A second portrait on the same card (ghost image) gives an overlapping estimate: keep the union.
  const merged: Detection[] = [];
  for (const d of [...found].sort((a, b) => b.score - a.score)) {
    const same = merged.find((m) => iou(m.box, d.box) > 0.3 || coverage(m.box, d.box) > 0.6 || coverage(d.box, m.box) > 0.6);
    if (same) same.box = union(same.box, d.box);
    else merged.push({ ...d });
  }
  return merged;
}

/** Whether some two lines sit one above the other like print on a card: similar height, same column, close. */
function stacked(lines: readonly TextBox[]): boolean {
  for (let i = 0; i < lines.length; i++) {
    for (let j = i + 1; j < lines.length; j++) {
      const a = lines[i]!, b = lines[j]!; // prettier-ignore
      const ha = len(a.quad[0], a.quad[3]), hb = len(b.quad[0], b.quad[3]); // prettier-ignore
      if (Math.max(ha, hb) > 2 * Math.min(ha, hb)) continue;
      const overlapX = Math.min(a.box.x + a.box.width, b.box.x + b.box.width) - Math.max(a.box.x, b.box.x);
      const gapY = Math.max(a.box.y, b.box.y) - Math.min(a.box.y + a.box.height, b.box.y + b.box.height);
      if (overlapX > 0 && gapY <= 3 * Math.max(ha, hb)) return true;
    }
  }
  return false;
}


export class IdCardDetector implements Detector {
  readonly name = "ids-face-text";
  readonly types: readonly ObjectType[] = ["id"];
  private readonly textOptions = new PlateDetector().textOptions();

  async detect(image: RgbImage, opts: DetectOptions): Promise<Detection[]> {
    const [faces, lines] = await Promise.all([(opts.faces ?? ((t: number) => detectFacesShared(image, t)))(opts.threshold), detectTextShared(image, this.textOptions)]);
    return idCardsFromFacesAndText(faces, lines, image.width, image.height, opts.threshold);
  }
}
