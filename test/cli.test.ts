/**
 * The one-shot CLI (bin/obscura.mjs -> scripts/obscura.ts), run as a user would: a face clip
 * redacted end to end with --json, an image, option errors with exit code 2, a missing input.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { ffmpegPath, probe, runFfmpeg } from "@/server/media";
import { boxAt } from "@/server/tracking";
import { ROOT, tempDir } from "./helpers/server";

const BIN = path.join(ROOT, "bin", "obscura.mjs");
const SAMPLE = path.join(ROOT, "node_modules/@vladmandic/face-api/demo/sample1.jpg");

/** Runs the launcher from another working directory (as `npx obscura` would be, from anywhere). */
function cli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (b: Buffer) => (stdout += b));
    p.stderr.on("data", (b: Buffer) => (stderr += b));
    p.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const frame = (file: string, n: number) =>
  execFileSync(ffmpegPath(), ["-v", "error", "-i", file, "-vf", `select=eq(n\\,${n})`, "-vsync", "0", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], { maxBuffer: 64 << 20 });

/** Mean absolute difference of two RGB frames inside a box. */
function diffIn(a: Uint8Array, b: Uint8Array, w: number, box: { x: number; y: number; width: number; height: number }): number {
  let sum = 0;
  let n = 0;
  for (let y = Math.ceil(box.y); y < box.y + box.height; y++) {
    for (let x = Math.ceil(box.x); x < box.x + box.width; x++) {
      const i = (y * w + x) * 3;
      sum += Math.abs(a[i]! - b[i]!) + Math.abs(a[i + 1]! - b[i + 1]!) + Math.abs(a[i + 2]! - b[i + 2]!);
      n += 3;
    }
  }
  return sum / Math.max(1, n);
}

describe("obscura redact", () => {
  let dir: string;
  let clip: string;

  beforeAll(async () => {
    dir = tempDir("cli");
    clip = path.join(dir, "faces.mp4");
    await runFfmpeg([
      "-loop", "1", "-framerate", "25", "-i", SAMPLE, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
      "-t", "2", "-vf", "scale=640:-2,crop=640:360:0:20", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", clip,
    ]);
  });

  it("redacts the faces of a clip, prints the tracks with --json and progress on stderr", async () => {
    const out = path.join(dir, "out", "redacted.mp4");
    const r = await cli(["redact", clip, "-o", out, "--features", "FACE_DETECTION", "--style", "blur", "--mask-audio", "SILENCE", "--json"], dir);
    expect(r.stderr).not.toMatch(/obscura: .*(failed|cannot|must)/);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ kind: "video", output: out, features: ["FACE_DETECTION"], media: { width: 640, height: 360, fps: 25 } });
    expect(doc.render).toMatchObject({ redactionStyle: "BLUR", maskAudio: "SILENCE" });
    const faces = doc.tracks.filter((t: any) => t.type === "face");
    expect(faces.length).toBe(3);
    expect(doc.leakCheck).toMatchObject({ framesScanned: 17, features: ["FACE_DETECTION"] });
    expect(doc.leakCheck.leakCount).toBe(doc.leaks.length);
    // progress: percent, frames per second and time left on stderr (not a TTY here: plain lines)
    expect(r.stderr).toMatch(/\d+% detect\s+[\d.]+ frames\/s\s+elapsed \d+:\d\d\s+left/);
    expect(r.stderr).toMatch(/leak check: \d+ possible leak/);

    const info = await probe(out);
    expect(info.video).toMatchObject({ codec: "h264", width: 640, height: 360 });
    expect(info.audio?.codec).toBe("aac");
    // the faces changed, the rest did not
    const a = frame(out, 25);
    const b = frame(clip, 25);
    for (const t of faces) {
      const f = boxAt(t, 25)!;
      expect(diffIn(a, b, 640, { x: f.x + f.width / 4, y: f.y + f.height / 4, width: f.width / 2, height: f.height / 2 })).toBeGreaterThan(8);
    }
    expect(diffIn(a, b, 640, { x: 0, y: 300, width: 640, height: 60 })).toBeLessThan(3);
    // nothing left behind but the output
    expect(fs.readdirSync(path.dirname(out))).toEqual(["redacted.mp4"]);
  });

  it("redacts an image into a JPG next to it, --no-leak-check skips the scan", async () => {
    const photo = path.join(dir, "photo.png");
    await sharp(SAMPLE).resize(640).png().toFile(photo);
    const r = await cli(["redact", "photo.png", "--features", "FACE_DETECTION", "--no-leak-check", "--json"], dir);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.kind).toBe("image");
    expect(doc.objects.filter((o: any) => o.type === "face" && o.score > 0.9)).toHaveLength(3);
    expect(doc.leakCheck).toBeNull();
    expect(r.stderr).not.toMatch(/leak check/);
    const meta = await sharp(path.join(dir, "photo.redacted.jpg")).metadata();
    expect([meta.format, meta.width]).toEqual(["jpeg", 640]);
  });

  it("refuses bad option values with exit code 2, naming the option, the value and what is allowed", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["--style", "swirl"], /--style "swirl": redactionStyle must be one of OUTLINE, FILL, PIXELATE, BLUR, MOSAIC, SMART/],
      [["--shape", "circle"], /--shape "circle": redactionShape must be one of RECTANGLE, ELLIPSE/],
      [["--intensity", "max"], /--intensity "max": redactionIntensity must be one of LOW, MEDIUM, HIGH/],
      [["--mask-audio", "mute"], /--mask-audio "mute": maskAudio must be one of SILENCE, BEEP, SCRAMBLE/],
      [["--preset", "fastest"], /--preset "fastest": videoPreset must be one of ULTRAFAST, .*VERYSLOW/],
      [["--color", "red"], /--color "red": redactionColor must be a colour as #RRGGBB/],
      [["--quality", "1.5"], /--quality "1.5": videoQuality must be between 0 and 1/],
      [["--threshold", "high"], /--threshold "high": objectsConfidenceThreshold must be a number between 0 and 1/],
      [["--profile", "fast"], /--profile "fast": profileName must be one of gen6_standard, /],
      [["--features", "FACES"], /--features "FACES": features items must be one of PERSON_DETECTION, .*DOCUMENT_DETECTION/],
      [["--frobnicate"], /Unknown option '--frobnicate'/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(["redact", clip, ...args], dir);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe("");
    }
    const none = await cli([], dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no command given/);
    const help = await cli(["--help"], dir);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: obscura redact <input video or image> \[-o <output>\]/);
  });

  it("fails with a clear message on a missing or unreadable input", async () => {
    const missing = await cli(["redact", "no-such-clip.mp4", "-o", "x.mp4"], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/obscura: cannot read the input no-such-clip\.mp4: no such file/);
    fs.writeFileSync(path.join(dir, "notes.txt"), "hello");
    const text = await cli(["redact", "notes.txt"], dir);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(/obscura: notes\.txt is not a readable video or image/);
    const noInput = await cli(["redact"], dir);
    expect(noInput.code).toBe(2);
    expect(noInput.stderr).toMatch(/no input given/);
  });
});
