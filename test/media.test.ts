import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isObscuraError } from "@/lib/errors";
import {
  POSTER_FILE,
  buildTranscodeArgs,
  hashFile,
  imageInfo,
  makeThumbnails,
  probe,
  probeFrameTimes,
  renderImageJpeg,
  runFfmpeg,
  transcodeVideo,
  videoQualityToCrf,
  type MediaInfo,
} from "@/server/media";
import { makeTestImage, makeTestVideo } from "./helpers/fixtures";

let dir: string;
const f = (name: string) => path.join(dir, name);

async function rejectionOf(p: Promise<unknown>): Promise<{ status?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    expect(isObscuraError(e)).toBe(true);
    return e as { status: string; message: string };
  }
  throw new Error("expected a rejection");
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "obscura-media-"));
  await Promise.all([
    makeTestVideo(f("h264.mp4")),
    makeTestVideo(f("silent.mp4"), { audio: false }),
    makeTestVideo(f("rot90.mp4"), { rotate: 90, seconds: 1 }),
    makeTestVideo(f("mpeg4.mp4"), { codec: "mpeg4" }),
    makeTestVideo(f("vp9.webm"), { codec: "vp9", width: 161, height: 121, seconds: 1 }),
    writeFile(f("notes.txt"), "this is not a video\n".repeat(50)),
    writeFile(f("garbage.mp4"), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251))),
  ]);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("probe", () => {
  it("reads a generated H.264 + AAC clip", async () => {
    const info = await probe(f("h264.mp4"));
    expect(info.kind).toBe("video");
    expect(info.container).toBe("mp4");
    expect(info.sizeBytes).toBe((await stat(f("h264.mp4"))).size);
    expect(info.durationSeconds).toBeCloseTo(2, 1);
    expect(info.video).toMatchObject({ codec: "h264", width: 320, height: 240, displayWidth: 320, displayHeight: 240, rotation: 0, fps: 25, frameCount: 50, pixelFormat: "yuv420p" });
    expect(info.audio).toMatchObject({ codec: "aac", channels: 1, sampleRate: 48000 });
  });

  it("reports no audio for a silent clip", async () => {
    expect((await probe(f("silent.mp4"))).audio).toBeNull();
  });

  it("swaps the display size of a clip rotated 90 degrees", async () => {
    const { video } = await probe(f("rot90.mp4"));
    expect(video).toMatchObject({ width: 320, height: 240, rotation: 90, displayWidth: 240, displayHeight: 320 });
  });

  it("estimates the frame count of a WebM (no nb_frames)", async () => {
    const info = await probe(f("vp9.webm"));
    expect(info).toMatchObject({ container: "webm", video: { codec: "vp9", width: 161, height: 121, frameCount: 25 } });
    expect(info.audio?.codec).toBe("opus");
  });

  it("reads an image as kind image with its EXIF rotation", async () => {
    await makeTestImage(f("portrait.jpg"), { width: 200, height: 100, orientation: 6 });
    const info = await probe(f("portrait.jpg"));
    expect(info).toMatchObject({ kind: "image", container: "jpeg", durationSeconds: null, audio: null });
    expect(info.video).toMatchObject({ width: 200, height: 100, rotation: 90, displayWidth: 100, displayHeight: 200, frameCount: 1 });
  });

  it("rejects a file that is not media, a playlist, and a missing file, with INVALID_ARGUMENT", async () => {
    // A playlist could make ffmpeg read other local files into the output: never accepted as input.
    await writeFile(f("playlist.m3u8"), `#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nh264.mp4\n#EXT-X-ENDLIST\n`);
    for (const name of ["notes.txt", "garbage.mp4", "playlist.m3u8"]) {
      const e = await rejectionOf(probe(f(name)));
      expect(e.status).toBe("INVALID_ARGUMENT");
      expect(e.message).toMatch(/^input is not a readable video or image \(ffprobe: .+\)$/);
      expect(e.message).not.toContain(dir);
    }
    expect((await rejectionOf(probe(f("missing.mp4")))).status).toBe("INVALID_ARGUMENT");
  });
});

describe("probeFrameTimes", () => {
  it.each(["h264.mp4", "vp9.webm"])("gives one ascending time per frame of %s", async (name) => {
    const info = await probe(f(name));
    const times = await probeFrameTimes(f(name));
    expect(times.length).toBe(info.video.frameCount);
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThan(times[i - 1]);
    expect(times[1] - times[0]).toBeCloseTo(1 / info.video.fps, 3);
  });
});

describe("hashFile", () => {
  it("matches node:crypto for all four types", async () => {
    const hashes = await hashFile(f("h264.mp4"), ["md5", "sha1", "sha256", "sha512"]);
    const bytes = readFileSync(f("h264.mp4"));
    for (const t of ["md5", "sha1", "sha256", "sha512"]) {
      expect(hashes[t]).toBe(createHash(t).update(bytes).digest("hex"));
    }
    expect(Object.keys(hashes)).toHaveLength(4);
  });

  it("rejects an unknown hash type", async () => {
    expect((await rejectionOf(hashFile(f("h264.mp4"), ["crc32" as "md5"]))).status).toBe("INVALID_ARGUMENT");
  });
});

describe("makeThumbnails", () => {
  it("makes evenly spread thumbnails 180 px high and a poster", async () => {
    const info = await probe(f("h264.mp4"));
    const out = f("thumbs");
    const thumbs = await makeThumbnails(f("h264.mp4"), out, info);
    expect(thumbs.length).toBe(4); // 2 s clip: one per 0.5 s
    expect(thumbs.map((t) => path.basename(t.file))).toEqual(["thumb-0001.jpg", "thumb-0002.jpg", "thumb-0003.jpg", "thumb-0004.jpg"]);
    expect(thumbs.map((t) => t.timeSeconds)).toEqual([0.25, 0.75, 1.25, 1.75]);
    for (const t of thumbs) expect(await sharp(t.file).metadata()).toMatchObject({ height: 180, width: 240, format: "jpeg" });
    expect(await sharp(path.join(out, POSTER_FILE)).metadata()).toMatchObject({ width: 320, height: 240 });
  });

  it("keeps the display orientation of a rotated clip and honours count/height", async () => {
    const info = await probe(f("rot90.mp4"));
    const thumbs = await makeThumbnails(f("rot90.mp4"), f("thumbs-rot"), info, { count: 1, height: 120 });
    expect(thumbs).toHaveLength(1);
    expect(await sharp(thumbs[0].file).metadata()).toMatchObject({ width: 90, height: 120 });
    expect(await sharp(f("thumbs-rot/poster.jpg")).metadata()).toMatchObject({ width: 240, height: 320 });
  });

  it("makes one upright thumbnail of an image", async () => {
    await makeTestImage(f("img6.jpg"), { width: 200, height: 100, orientation: 6 });
    const thumbs = await makeThumbnails(f("img6.jpg"), f("thumbs-img"), await probe(f("img6.jpg")));
    expect(thumbs).toEqual([{ file: f("thumbs-img/thumb-0001.jpg"), timeSeconds: 0 }]);
    expect(await sharp(thumbs[0].file).metadata()).toMatchObject({ width: 90, height: 180 });
    expect(existsSync(f("thumbs-img/poster.jpg"))).toBe(true);
  });
});

describe("transcode", () => {
  it("maps videoQuality to CRF", () => {
    expect(videoQualityToCrf(0)).toBe(40);
    expect(videoQualityToCrf(0.65)).toBe(23);
    expect(videoQualityToCrf(1)).toBe(14);
    expect(videoQualityToCrf(0.5)).toBe(27);
    expect(videoQualityToCrf(2)).toBe(14);
  });

  it("builds ffmpeg arguments from the options", () => {
    const info = { kind: "video", audio: { codec: "aac" } } as MediaInfo;
    const args = buildTranscodeArgs("in.mkv", "out.mp4", { info, quality: 0.65, preset: "VERYFAST" });
    expect(args.join(" ")).toContain("-c:v libx264 -preset veryfast -crf 23");
    expect(args.join(" ")).toContain("-c:a copy");
    expect(args.join(" ")).toContain("-movflags +faststart");
    expect(args.at(-1)).toBe("out.mp4");
    const mp3 = buildTranscodeArgs("a", "b", { info: { ...info, audio: { codec: "mp3", channels: 2, sampleRate: 44100, bitRate: null } }, quality: 1, preset: "slow" });
    expect(mp3.join(" ")).toContain("-c:a aac -b:a 128k");
    expect(buildTranscodeArgs("a", "b", { info: { ...info, audio: null }, quality: 1, preset: "fast" })).toContain("-an");
    expect(() => buildTranscodeArgs("a", "b", { info, quality: 1, preset: "LUDICROUS" })).toThrow(/videoPreset must be one of/);
  });

  it("turns MPEG-4 Part 2 + MP3 into H.264 + AAC, reporting monotonic progress", async () => {
    const info = await probe(f("mpeg4.mp4"));
    expect(info.video.codec).toBe("mpeg4");
    expect(info.audio?.codec).toBe("mp3");
    const progress: number[] = [];
    await transcodeVideo(f("mpeg4.mp4"), f("out-mpeg4.mp4"), { info, quality: 0.65, preset: "ULTRAFAST", onProgress: (p) => progress.push(p) });
    const out = await probe(f("out-mpeg4.mp4"));
    expect(out).toMatchObject({ container: "mp4", video: { codec: "h264", pixelFormat: "yuv420p", width: 320, height: 240, frameCount: 50 }, audio: { codec: "aac" } });
    expect(progress.at(-1)).toBe(1);
    for (let i = 1; i < progress.length; i++) expect(progress[i]).toBeGreaterThan(progress[i - 1]);
  });

  it("copies AAC, drops absent audio, rotates upright and evens odd sizes", async () => {
    const cases: Array<[string, Partial<MediaInfo["video"]>, string | null]> = [
      ["h264.mp4", { width: 320, height: 240, rotation: 0 }, "aac"],
      ["silent.mp4", { width: 320, height: 240 }, null],
      ["rot90.mp4", { width: 240, height: 320, rotation: 0 }, "aac"],
      ["vp9.webm", { width: 160, height: 120, frameCount: 25 }, "aac"],
    ];
    for (const [name, video, audio] of cases) {
      const output = f(`out-${name}.mp4`);
      await transcodeVideo(f(name), output, { info: await probe(f(name)), quality: 0.3, preset: "ultrafast" });
      const out = await probe(output);
      expect(out.video).toMatchObject({ codec: "h264", ...video });
      expect(out.audio?.codec ?? null).toBe(audio);
    }
  });

  it("rejects an unreadable input with INVALID_ARGUMENT quoting ffmpeg", async () => {
    const e = await rejectionOf(runFfmpeg(["-i", f("garbage.mp4"), f("never.mp4")]));
    expect(e.status).toBe("INVALID_ARGUMENT");
    expect(e.message).toMatch(/^ffmpeg could not read the input: .*garbage\.mp4: /);
    expect(e.message).not.toContain(dir);
  });

  it("kills ffmpeg and rejects CANCELLED soon after an abort", async () => {
    const output = f("long.mp4");
    const ac = new AbortController();
    const run = runFfmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x480:rate=25:duration=120", "-c:v", "libx264", "-preset", "veryslow", output], {
      signal: ac.signal,
      durationSeconds: 120,
    });
    await new Promise((r) => setTimeout(r, 400));
    const t0 = Date.now();
    ac.abort();
    const e = await rejectionOf(run);
    expect(e.status).toBe("CANCELLED");
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(runningProcessesMentioning(output)).toEqual([]);
    expect((await rejectionOf(runFfmpeg(["-version"], { signal: ac.signal }))).status).toBe("CANCELLED");
  });
});

describe("images", () => {
  it("reads the display size after EXIF orientation", async () => {
    await makeTestImage(f("o6.jpg"), { width: 200, height: 100, orientation: 6 });
    expect(await imageInfo(f("o6.jpg"))).toEqual({ width: 100, height: 200, format: "jpeg", orientation: 6 });
    await makeTestImage(f("plain.png"), { width: 200, height: 100, format: "png" });
    expect(await imageInfo(f("plain.png"))).toEqual({ width: 200, height: 100, format: "png", orientation: null });
  });

  it("renders JPEG upright, without metadata, at the asked quality", async () => {
    await makeTestImage(f("src6.jpg"), { width: 200, height: 100, orientation: 6 });
    await renderImageJpeg(f("src6.jpg"), f("q9.jpg"), { quality: 0.9 });
    await renderImageJpeg(f("src6.jpg"), f("q1.jpg"), { quality: 0.1 });
    const meta = await sharp(f("q9.jpg")).metadata();
    expect(meta).toMatchObject({ width: 100, height: 200, format: "jpeg" });
    expect(meta.orientation).toBeUndefined();
    expect(meta.exif).toBeUndefined();
    expect((await stat(f("q1.jpg"))).size).toBeLessThan((await stat(f("q9.jpg"))).size);
    // The dark square drawn top-left is at the top-right once rotated 90 degrees clockwise.
    const { data, info } = await sharp(f("q9.jpg")).raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => data[(y * info.width + x) * info.channels + 2]; // blue: 160 outside the square
    expect(at(info.width - 5, 5)).toBeLessThan(60);
    expect(at(5, 5)).toBeGreaterThan(60);
  });

  it("rejects a file that is not an image", async () => {
    expect((await rejectionOf(renderImageJpeg(f("notes.txt"), f("x.jpg"), { quality: 0.5 }))).status).toBe("INVALID_ARGUMENT");
  });
});

function runningProcessesMentioning(text: string): string[] {
  if (process.platform !== "linux") return [];
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes(text)) found.push(pid);
    } catch {
      // process ended meanwhile
    }
  }
  return found;
}
