/**
 * Test media made on the spot (no binary fixtures in the repo).
 *
 * makeTestVideo: ffmpeg lavfi testsrc2 (+ a 440 Hz sine). The container follows the file
 * extension (.mp4, .mov, .mkv, .webm, .avi). Audio codec: aac for h264, mp3 for mpeg4, opus for
 * vp9 (override with `audioCodec`). Rotation is written in a second, stream-copy pass because
 * ffmpeg 4.1 drops `-metadata:s:v rotate=N` when encoding, and its stream-copy path writes the
 * angle mirrored (asking for 90 yields a file that reads as 270), so the complement is asked for.
 *
 * Odd sizes work with mpeg4 and vp9 (libx264 with yuv420p needs even ones).
 *
 * makeTestImage: a sharp-made colour gradient with a dark square near the top-left corner, so
 * orientation mistakes are visible; `orientation` writes the EXIF Orientation tag (JPEG).
 */
import { rename, rm } from "node:fs/promises";
import sharp from "sharp";
import { runFfmpeg } from "@/server/media/ffmpeg";

export interface TestVideoOptions {
  seconds?: number;
  width?: number;
  height?: number;
  fps?: number;
  audio?: boolean;
  rotate?: 0 | 90 | 180 | 270;
  codec?: "h264" | "mpeg4" | "vp9";
  audioCodec?: "aac" | "mp3" | "opus" | "vorbis";
}

const VIDEO_ENCODER = {
  h264: ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"],
  mpeg4: ["-c:v", "mpeg4", "-q:v", "5", "-pix_fmt", "yuv420p"],
  vp9: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "500k", "-pix_fmt", "yuv420p"],
};
const AUDIO_ENCODER = {
  aac: ["-c:a", "aac", "-b:a", "96k"],
  mp3: ["-c:a", "libmp3lame", "-b:a", "96k"],
  opus: ["-c:a", "libopus", "-b:a", "64k"],
  vorbis: ["-c:a", "libvorbis", "-q:a", "3"],
};
const DEFAULT_AUDIO = { h264: "aac", mpeg4: "mp3", vp9: "opus" } as const;

export async function makeTestVideo(path: string, opts: TestVideoOptions = {}): Promise<void> {
  const { seconds = 2, width = 320, height = 240, fps = 25, audio = true, rotate = 0, codec = "h264" } = opts;
  const audioCodec = opts.audioCodec ?? DEFAULT_AUDIO[codec];
  const encodeTo = rotate ? `${path}.unrotated${extensionOf(path)}` : path;
  await runFfmpeg([
    "-f", "lavfi", "-i", `testsrc2=size=${width}x${height}:rate=${fps}:duration=${seconds}`,
    ...(audio ? ["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${seconds}`] : []),
    // testsrc2 in ffmpeg 4.1 rounds odd sizes down to even ones: scale back to the size asked for.
    ...(width % 2 || height % 2 ? ["-vf", `scale=${width}:${height}`] : []),
    ...VIDEO_ENCODER[codec],
    ...(audio ? AUDIO_ENCODER[audioCodec] : ["-an"]),
    "-shortest",
    encodeTo,
  ]);
  if (!rotate) return;
  try {
    await runFfmpeg(["-i", encodeTo, "-map", "0", "-c", "copy", "-metadata:s:v:0", `rotate=${(360 - rotate) % 360}`, `${path}.tmp${extensionOf(path)}`]);
    await rename(`${path}.tmp${extensionOf(path)}`, path);
  } finally {
    await rm(encodeTo, { force: true });
  }
}

export interface TestImageOptions {
  width?: number;
  height?: number;
  format?: "jpeg" | "png";
  orientation?: number;
}

export async function makeTestImage(path: string, opts: TestImageOptions = {}): Promise<void> {
  const { width = 320, height = 240, format = "jpeg", orientation } = opts;
  const pixels = Buffer.alloc(width * height * 3);
  const square = Math.max(1, Math.floor(Math.min(width, height) / 4));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const dark = x < square && y < square;
      pixels[i] = dark ? 20 : Math.round((255 * x) / Math.max(1, width - 1));
      pixels[i + 1] = dark ? 20 : Math.round((255 * y) / Math.max(1, height - 1));
      pixels[i + 2] = dark ? 20 : 160;
    }
  }
  let img = sharp(pixels, { raw: { width, height, channels: 3 } });
  if (orientation) img = img.withMetadata({ orientation });
  await (format === "png" ? img.png() : img.jpeg({ quality: 90 })).toFile(path);
}

function extensionOf(path: string): string {
  const m = /\.[A-Za-z0-9]+$/.exec(path);
  return m ? m[0] : "";
}
