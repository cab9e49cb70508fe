/**
 * Thumbnails for the editor's timeline (`thumb-0001.jpg`, ... evenly spread, fixed height) and a
 * poster (`poster.jpg`: first frame, upright, at most 1280 px wide). Videos go through one ffmpeg
 * run with one fast-seeking input per thumbnail; images go through sharp (which honours EXIF
 * orientation, unlike ffmpeg).
 */
import { mkdir, stat } from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";
import { ObscuraError } from "@/lib/errors";
import { redactPaths, runFfmpeg } from "./ffmpeg";
import type { MediaInfo } from "./probe";

export const POSTER_FILE = "poster.jpg";
const POSTER_MAX_WIDTH = 1280;
/** Thumbnails are at least this far apart, so very short clips get fewer of them. */
const MIN_SPACING_SECONDS = 0.5;

export interface Thumbnail {
  file: string;
  /** Seconds from the start of the video (0 for images). */
  timeSeconds: number;
}

export interface ThumbnailOptions {
  count?: number;
  height?: number;
  signal?: AbortSignal;
}

export function thumbnailName(index: number): string {
  return `thumb-${String(index + 1).padStart(4, "0")}.jpg`;
}

/** Times (seconds from the start) of `count` thumbnails, each in the middle of its slice. */
export function thumbnailTimes(info: MediaInfo, count = 10): number[] {
  const duration = info.durationSeconds ?? (info.video.fps > 0 ? info.video.frameCount / info.video.fps : 0);
  if (info.kind === "image" || !(duration > 0)) return [0];
  let n = Math.min(Math.max(1, Math.floor(count)), Math.floor(duration / MIN_SPACING_SECONDS));
  if (info.video.frameCount > 0) n = Math.min(n, info.video.frameCount);
  n = Math.max(1, n);
  return Array.from({ length: n }, (_, i) => Math.round(((duration * (i + 0.5)) / n) * 1000) / 1000);
}

export async function makeThumbnails(file: string, outDir: string, info: MediaInfo, opts: ThumbnailOptions = {}): Promise<Thumbnail[]> {
  const height = Math.max(2, Math.round(opts.height ?? 180));
  await mkdir(outDir, { recursive: true });
  if (info.kind === "image") return imageThumbnails(file, outDir, height);

  const times = thumbnailTimes(info, opts.count ?? 10);
  const args: string[] = [];
  for (const t of times) args.push("-ss", t.toFixed(3), "-i", file);
  args.push("-i", file);
  const jpeg = ["-an", "-sn", "-dn", "-frames:v", "1", "-q:v", "3", "-pix_fmt", "yuvj420p", "-f", "image2"];
  times.forEach((_, i) => {
    args.push("-map", `${i}:V:0`, "-vf", `scale=-2:${height}`, ...jpeg, path.join(outDir, thumbnailName(i)));
  });
  args.push("-map", `${times.length}:V:0`, "-vf", `scale='min(${POSTER_MAX_WIDTH},iw)':-2`, ...jpeg, path.join(outDir, POSTER_FILE));
  await runFfmpeg(args, { signal: opts.signal });

  const made: Thumbnail[] = [];
  for (const [i, t] of times.entries()) {
    const out = path.join(outDir, thumbnailName(i));
    if (await nonEmpty(out)) made.push({ file: out, timeSeconds: t });
  }
  if (!made.length) throw new ObscuraError("INTERNAL", "ffmpeg produced no thumbnail for this video");
  return made;
}

async function imageThumbnails(file: string, outDir: string, height: number): Promise<Thumbnail[]> {
  const out = path.join(outDir, thumbnailName(0));
  try {
    await sharp(file).rotate().resize({ height }).flatten({ background: "#ffffff" }).jpeg({ quality: 80 }).toFile(out);
    await sharp(file)
      .rotate()
      .resize({ width: POSTER_MAX_WIDTH, withoutEnlargement: true })
      .flatten({ background: "#ffffff" })
      .jpeg({ quality: 85 })
      .toFile(path.join(outDir, POSTER_FILE));
  } catch (cause) {
    throw new ObscuraError("INVALID_ARGUMENT", `cannot make a thumbnail of the image (${redactPaths((cause as Error).message, [file])})`, { cause });
  }
  return [{ file: out, timeSeconds: 0 }];
}

async function nonEmpty(file: string): Promise<boolean> {
  return stat(file).then(
    (s) => s.size > 0,
    () => false,
  );
}
