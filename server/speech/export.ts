/**
 * Transcript exports: JSON (the Transcript itself) and WebVTT subtitles.
 *
 * WebVTT: a segment becomes one or more cues of at most `maxLines` lines of at most `maxLineChars`
 * characters (a single longer word keeps a line of its own). A segment's time is shared among its
 * cues in proportion to their text length, which follows speaking time closely enough for
 * subtitles without inventing word times. `&`, `<` and `>` are escaped (the only characters cue
 * text may not hold as they are; escaping `>` also keeps "-->" out of the text).
 */
import type { Transcript, TranscriptSegment } from "./transcribe";

export interface WebVttOptions {
  /** Characters per line (default 42, the usual broadcast limit). */
  maxLineChars?: number;
  /** Lines per cue (default 2). */
  maxLines?: number;
}

export function toTranscriptJson(transcript: Transcript): string {
  return JSON.stringify(transcript, null, 2) + "\n";
}

export function toWebVTT(transcript: Transcript, opts: WebVttOptions = {}): string {
  const maxLineChars = Math.max(1, opts.maxLineChars ?? 42);
  const maxLines = Math.max(1, opts.maxLines ?? 2);
  const blocks = ["WEBVTT"];
  let n = 0;
  for (const segment of transcript.segments) {
    for (const cue of segmentCues(segment, maxLineChars, maxLines)) {
      n++;
      blocks.push(`${n}\n${vttTime(cue.start)} --> ${vttTime(cue.end)}\n${cue.lines.map(escapeCueText).join("\n")}`);
    }
  }
  return blocks.join("\n\n") + "\n";
}

interface Cue {
  start: number;
  end: number;
  lines: string[];
}

/** Splits a segment's text into cues and divides its time by their text length. */
export function segmentCues(segment: TranscriptSegment, maxLineChars: number, maxLines: number): Cue[] {
  const words = segment.text.split(/\s+/).filter(Boolean);
  if (!words.length) return [];
  const lines: string[] = [];
  for (const word of words) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= maxLineChars) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  const groups: string[][] = [];
  for (let i = 0; i < lines.length; i += maxLines) groups.push(lines.slice(i, i + maxLines));
  // +1 per cue for the space that separated it from the next one in the text.
  const weight = (g: string[]) => g.join(" ").length + 1;
  const total = groups.reduce((sum, g) => sum + weight(g), 0);
  const span = Math.max(0, segment.end - segment.start);
  let before = 0;
  return groups.map((g) => {
    const start = segment.start + (span * before) / total;
    before += weight(g);
    const end = segment.start + (span * before) / total;
    return { start: round3(start), end: round3(end), lines: g };
  });
}

/** Seconds -> HH:MM:SS.mmm */
export function vttTime(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  const pad = (v: number, w = 2) => String(v).padStart(w, "0");
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
}

function escapeCueText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
