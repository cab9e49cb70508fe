/**
 * Documents and papers as dense text: text lines (the PP-OCRv4 detector, shared with the plate
 * detector so it runs once per frame) that stack into a block of at least MIN_LINES lines of
 * similar height are one document region. CenterNet's "book" class adds books (objects.ts).
 */
import { clip, type Box } from "@/lib/geometry";
import { PlateDetector } from "./plates";
import { detectTextShared, type TextBox } from "./text-detect";
import type { DetectOptions, Detection, Detector, ObjectType, RgbImage } from "./types";

export const MIN_LINES = 3;

/** Whether two lines belong to one block: similar heights, overlapping columns, small vertical gap. */
function neighbours(a: Box, b: Box): boolean {
  const h = Math.min(a.height, b.height);
  if (Math.max(a.height, b.height) > 2 * h) return false;
  const overlapX = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  if (overlapX < -h) return false;
  const gapY = Math.max(a.y, b.y) - Math.min(a.y + a.height, b.y + b.height);
  return gapY <= 1.2 * h;
}

/** Groups text lines into blocks; blocks of MIN_LINES or more become document detections (pure). */
export function documentsFromText(lines: readonly TextBox[], width: number, height: number, threshold: number): Detection[] {
  const parent = lines.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  for (let i = 0; i < lines.length; i++) {
    for (let j = i + 1; j < lines.length; j++) if (neighbours(lines[i]!.box, lines[j]!.box)) parent[find(i)] = find(j);
  }
  const groups = new Map<number, TextBox[]>();
  lines.forEach((l, i) => groups.set(find(i), [...(groups.get(find(i)) ?? []), l]));
  const out: Detection[] = [];
  for (const g of groups.values()) {
    if (g.length < MIN_LINES) continue;
    const x0 = Math.min(...g.map((l) => l.box.x));
    const y0 = Math.min(...g.map((l) => l.box.y));
    const x1 = Math.max(...g.map((l) => l.box.x + l.box.width));
    const y1 = Math.max(...g.map((l) => l.box.y + l.box.height));
    const pad = 0.5 * median(g.map((l) => l.box.height));
    const score = g.reduce((s, l) => s + l.score, 0) / g.length;
    if (score < threshold) continue;
    out.push({ type: "document", score, label: "text block", box: clip({ x: x0 - pad, y: y0 - pad, width: x1 - x0 + 2 * pad, height: y1 - y0 + 2 * pad }, width, height) });
  }
  return out;
}

/** The middle value (the upper one of an even count); 0 for none. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

export class TextDocumentDetector implements Detector {
  readonly name = "documents-text";
  readonly types: readonly ObjectType[] = ["document"];
  /** Same text-detection settings as the plate detector, so one model run serves both. */
  private readonly textOptions = new PlateDetector().textOptions();

  async detect(image: RgbImage, opts: DetectOptions): Promise<Detection[]> {
    return documentsFromText(await detectTextShared(image, this.textOptions), image.width, image.height, opts.threshold);
  }
}
