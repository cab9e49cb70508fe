/**
 * "Track automatically" (server/tracking/follow.ts) on synthetic video made by ffmpeg: a face cut
 * from a photo moves over colour bars along a known path; following a box drawn on a middle frame
 * must stay on it forward and backward (IoU >= 0.7 on every frame, by interpolation of the
 * returned keyframes), and stop when the face leaves the picture.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { probe, runFfmpeg } from "@/server/media";
import { follow, ncc, patch, simplify, toGray, type FollowKeyframe } from "@/server/tracking/follow";
import { boxAt, type Track } from "@/lib/editor/model";
import { tempDir } from "./helpers/server";

const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
const FPS = 25;
const SIZE = 80;

/** A 3 s 640x360 clip: a face patch moving with x(t), y(t) (ffmpeg expressions of t) over colour bars. */
async function movingFace(name: string, x: string, y: string): Promise<string> {
  const out = path.join(tempDir("follow"), name);
  await runFfmpeg([
    "-f", "lavfi", "-i", `smptehdbars=size=640x360:rate=${FPS}:duration=3`,
    "-loop", "1", "-framerate", String(FPS), "-i", SAMPLE,
    "-filter_complex", `[1:v]scale=640:-2,crop=${SIZE}:${SIZE}:270:170[f];[0:v][f]overlay=x='${x}':y='${y}':shortest=1`,
    "-t", "3", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", out,
  ]);
  return out;
}

const iou = (a: { x: number; y: number; width: number; height: number }, b: typeof a) => {
  const w = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const h = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  return (w * h) / (a.width * a.height + b.width * b.height - w * h);
};

describe("following a drawn box", () => {
  it("scores a patch against itself 1 and against a shifted one less; keeps only needed keyframes", () => {
    const rgb = new Uint8Array(64 * 64 * 3).map((_, i) => (i * 37) % 251);
    const g = toGray(rgb, 64, 64);
    const a = patch(g, 10, 10, 16, 16)!;
    expect(ncc(a, a)).toBeCloseTo(1, 5);
    expect(ncc(a, patch(g, 13, 11, 16, 16)!)).toBeLessThan(0.9);
    expect(patch(g, 60, 60, 16, 16)).toBeNull();
    const line: FollowKeyframe[] = Array.from({ length: 50 }, (_, f) => ({ frame: f, box: { x: f * 2, y: 10, width: 20, height: 20 }, score: 0.9, source: "predicted" }));
    expect(simplify(line).map((k) => k.frame)).toEqual([0, 49]);
    line[25]!.box.y = 30;
    expect(simplify(line).length).toBeGreaterThan(2);
  });

  it("stays on a moving face forward and backward from the drawn frame", async () => {
    const file = await movingFace("moving.mp4", "100+t*80", "120+30*sin(2*t)");
    const info = await probe(file);
    const truth = (n: number) => ({ x: 100 + (n / FPS) * 80, y: 120 + 30 * Math.sin((2 * n) / FPS), width: SIZE, height: SIZE });
    const started = Date.now();
    const r = await follow(file, info, { frame: 30, box: truth(30), direction: "both", maxFrames: 300, frameCount: info.video.frameCount });
    console.log(`followed ${r.lastFrame - r.firstFrame + 1} frames of 640x360 in ${Date.now() - started} ms (${r.framesPerSecond} frames/s), ${r.keyframes.length} keyframes`);
    expect(r.stopped).toEqual({ forward: "endOfVideo", backward: "endOfVideo" });
    expect([r.firstFrame, r.lastFrame]).toEqual([0, info.video.frameCount - 1]);
    const track: Track = { id: 1, type: "face", firstFrame: r.firstFrame, lastFrame: r.lastFrame, keyframes: r.keyframes };
    let worst = 1;
    for (let n = r.firstFrame; n <= r.lastFrame; n++) worst = Math.min(worst, iou(boxAt(track, n)!, truth(n)));
    expect(worst).toBeGreaterThanOrEqual(0.7);
    expect(r.keyframes.length).toBeLessThan(info.video.frameCount); // simplified
  });

  it("stops when the face leaves the picture", async () => {
    const file = await movingFace("leaving.mp4", "100+t*260", "140");
    const info = await probe(file);
    const r = await follow(file, info, { frame: 5, box: { x: 100 + (5 / FPS) * 260, y: 140, width: SIZE, height: SIZE }, direction: "forward", maxFrames: 300, frameCount: info.video.frameCount });
    expect(r.stopped.forward).toBe("lostTarget");
    const leavesAt = Math.ceil(((640 - SIZE - 100) / 260) * FPS); // fully inside until here
    expect(r.lastFrame).toBeGreaterThanOrEqual(leavesAt - 3);
    expect(r.lastFrame).toBeLessThan(info.video.frameCount - 5);
  });
});
