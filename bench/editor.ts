/**
 * Editor speed with a long, crowded video (issue: "a 10-minute video with 2,000 tracks stays
 * interactive"): the real server on PostgreSQL, a 10-minute 25 fps clip prepared by the engine
 * (MEDIA_PREPARE), 2,000 moving tracks saved through the session API (as a detector would leave
 * them: a keyframe every 5th frame), and the editor in Debian's chromium. Measured:
 * - open: navigation to every track listed;
 * - seek: a click on the timeline at a random frame until the overlay has drawn that frame's
 *   boxes (the frame counter shows it and two animation frames have passed), 40 random seeks;
 *   also until the video presents the frame (decoder latency, for reference);
 * - drag: a box dragged by 150 pointer moves; the overlay's frame rate during the drag from the
 *   animation-frame timestamps (median and 95th percentile interval) and how long each pointer
 *   move took to handle;
 * - save: Save of the 2,000 tracks until the version moved.
 * Figures, not assertions: printed as JSON and written to bench/results/editor.json.
 *   npm run bench -- editor          (or: node --import tsx bench/editor.ts [--minutes 10 --tracks 2000])
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { makeTestVideo } from "../test/helpers/fixtures";
import { fileUri, startServer, tempDir, tempPostgres } from "../test/helpers/server";
import type { Track } from "../lib/editor/model";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const MINUTES = arg("minutes", 10);
const TRACKS = arg("tracks", 2000);
const FPS = 25;
const W = 1280;
const H = 720;
const PASSWORD = "Correct-Horse-42!";
const PROJECT = "bench-editor";
const say = (m: string) => process.stderr.write(`[editor bench] ${m}\n`);

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/** Tracks spread over the video like a busy street's: 2-60 s long, moving, a keyframe every 5th frame. */
function syntheticTracks(n: number, frameCount: number): Track[] {
  const r = rng(11);
  const types: Track["type"][] = ["face", "face", "face", "person", "licensePlate", "vehicle"];
  return Array.from({ length: n }, (_, i) => {
    const len = Math.round(50 + r() * 1450);
    const first = Math.floor(r() * Math.max(1, frameCount - len));
    const last = Math.min(frameCount - 1, first + len);
    const w = 30 + r() * 120;
    const h = w * (0.8 + r() * 0.6);
    const [x0, y0] = [r() * (W - w), r() * (H - h)];
    const [vx, vy] = [(r() - 0.5) * 2, (r() - 0.5) * 1];
    const keyframes: Track["keyframes"] = [];
    for (let f = first; f <= last; f += 5) {
      const t = f - first;
      keyframes.push({ frame: f, box: { x: +Math.min(W - w, Math.max(0, x0 + vx * t)).toFixed(1), y: +Math.min(H - h, Math.max(0, y0 + vy * t)).toFixed(1), width: +w.toFixed(1), height: +h.toFixed(1) }, score: +(0.3 + r() * 0.7).toFixed(3), source: "detected" });
    }
    if (keyframes.at(-1)!.frame !== last) keyframes.push({ ...keyframes.at(-1)!, frame: last });
    return { id: i + 1, type: types[i % types.length]!, firstFrame: first, lastFrame: last, keyframes };
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!.toFixed(1);
};
const median = (xs: number[]) => pct(xs, 50);

const pg = await tempPostgres();
const server = await startServer({ DATABASE_URL: pg.url, OBSCURA_ADMIN_USER: "chief", OBSCURA_ADMIN_PASSWORD: PASSWORD });
const browser = await chromium.launch({ executablePath: process.env.OBSCURA_CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
try {
  const dir = tempDir("bench-editor");
  const clip = path.join(dir, `street-${MINUTES}min.mp4`);
  say(`making a ${MINUTES}-minute ${W}x${H} clip`);
  await makeTestVideo(clip, { seconds: MINUTES * 60, width: W, height: H, fps: FPS, audio: false });
  const r = await server.api("POST", "/api/v1/videos:process", { inputUri: fileUri(clip), features: ["MEDIA_PREPARE"], projectId: PROJECT });
  if (r.status !== 200) throw new Error(`process: ${r.status} ${JSON.stringify(r.body)}`);
  await server.waitDone((r.body as { name: string }).name, 600_000);
  const list = (await server.api("GET", `/api/v1/projects/${PROJECT}/sessions`)).body as { sessions: Array<{ sessionId: string }> };
  const sessionId = list.sessions[0]!.sessionId;
  const session = (await server.api("GET", `/api/v1/projects/${PROJECT}/sessions/${sessionId}`)).body as { version: number; frame: { frameCount: number } };
  const frameCount = session.frame.frameCount;
  const tracks = syntheticTracks(TRACKS, frameCount);
  const keyframes = tracks.reduce((n, t) => n + t.keyframes.length, 0);
  const put = await server.api("PUT", `/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks`, { version: session.version, tracks });
  if (put.status !== 200) throw new Error(`saving the tracks: ${put.status} ${JSON.stringify(put.body).slice(0, 300)}`);
  say(`${TRACKS} tracks, ${keyframes} keyframes saved over ${frameCount} frames`);

  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(`${server.url}/projects/${PROJECT}`);
  await page.fill("#username", "chief");
  await page.fill("#password", PASSWORD);
  await page.click("button[type=submit]");
  await page.waitForURL(new RegExp(`/projects/${PROJECT}$`));
  const t0 = Date.now();
  await page.goto(`${server.url}/projects/${PROJECT}/videos/${sessionId}`);
  await page.waitForSelector("[data-track]");
  await page.waitForSelector("[data-testid=video-stage] canvas");
  const openMs = Date.now() - t0;
  await page.waitForTimeout(1000);

  // seeks: timeline clicks at random frames
  say("seeking");
  const rand = rng(5);
  const seeks: Array<{ overlayMs: number; videoMs: number; boxes: number }> = [];
  for (let i = 0; i < 40; i++) {
    const fraction = 0.02 + rand() * 0.96;
    const m = await page.evaluate(async (fr) => {
      const c = document.querySelector("[data-testid=timeline]") as HTMLCanvasElement;
      const r = c.getBoundingClientRect();
      const video = document.querySelector("[data-testid=video-stage] video") as HTMLVideoElement;
      const counter = document.querySelector("[data-testid=frame]")!;
      const before = counter.textContent;
      const x = r.left + r.width * fr;
      const y = r.top + 10;
      const start = performance.now();
      const presented = new Promise<number>((res) => video.requestVideoFrameCallback(() => res(performance.now() - start)));
      c.dispatchEvent(new PointerEvent("pointerdown", { clientX: x, clientY: y, bubbles: true, pointerId: 1 }));
      c.dispatchEvent(new PointerEvent("pointerup", { clientX: x, clientY: y, bubbles: true, pointerId: 1 }));
      while (counter.textContent === before) await new Promise((res) => setTimeout(res, 0));
      await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
      const overlayMs = performance.now() - start;
      const videoMs = await Promise.race([presented, new Promise<number>((res) => setTimeout(() => res(-1), 5000))]);
      const boxes = document.querySelectorAll("[data-testid=video-stage] .konvajs-content canvas").length;
      return { overlayMs, videoMs, boxes };
    }, fraction);
    seeks.push(m);
  }

  // drag: select a box on the current frame and drag it around
  say("dragging");
  const stage = (await page.locator("[data-testid=video-stage]").boundingBox())!;
  const frameNow = Number(await page.textContent("[data-testid=frame]"));
  const active = tracks.filter((t) => t.firstFrame <= frameNow && t.lastFrame >= frameNow);
  const scale = stage.width / W;
  const k = active[0]!.keyframes.reduce((best, kf) => (Math.abs(kf.frame - frameNow) < Math.abs(best.frame - frameNow) ? kf : best));
  const cx = stage.x + (k.box.x + k.box.width / 2) * scale;
  const cy = stage.y + (k.box.y + k.box.height / 2) * scale;
  // (a string: tsx would wrap a named function in a helper the page does not have)
  await page.evaluate("window.__frames = []; window.__stop = false; requestAnimationFrame(function tick(ts) { window.__frames.push(ts); if (!window.__stop) requestAnimationFrame(tick); });");
  await page.mouse.move(cx, cy);
  await page.mouse.down();
  const moveMs: number[] = [];
  for (let i = 1; i <= 150; i++) {
    const a = (i / 150) * Math.PI * 2;
    const s = Date.now();
    await page.mouse.move(cx + Math.cos(a) * 120 * scale, cy + Math.sin(a) * 60 * scale);
    moveMs.push(Date.now() - s);
  }
  await page.mouse.up();
  const frames = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __stop: boolean };
    w.__stop = true;
    return w.__frames;
  });
  const intervals = frames.slice(1).map((t, i) => t - frames[i]!);
  const dragSeconds = (frames.at(-1)! - frames[0]!) / 1000;

  // save all tracks (after the drag, so the save carries a change)
  say("saving");
  const s0 = Date.now();
  await page.click("button:has-text('Save')");
  await page.waitForFunction(() => /Saved · version/.test(document.querySelector("[data-testid=save-state]")?.textContent ?? ""), null, { timeout: 120_000 });
  const saveMs = Date.now() - s0;

  const overlay = seeks.map((x) => x.overlayMs);
  const video = seeks.map((x) => x.videoMs).filter((x) => x >= 0);
  const result = {
    machine: { cpus: os.cpus().length, loadavg: os.loadavg().map((l) => +l.toFixed(2)) },
    video: { minutes: MINUTES, width: W, height: H, fps: FPS, frameCount },
    tracks: TRACKS,
    keyframes,
    activePerFrameAtDrag: active.length,
    openMs,
    seek: { n: seeks.length, overlayMedianMs: median(overlay), overlayP95Ms: pct(overlay, 95), overlayMaxMs: +Math.max(...overlay).toFixed(1), videoFrameMedianMs: video.length ? median(video) : null, videoFrameP95Ms: video.length ? pct(video, 95) : null },
    drag: {
      pointerMoves: 150,
      seconds: +dragSeconds.toFixed(2),
      overlayFps: +(intervals.length / dragSeconds).toFixed(1),
      frameIntervalMedianMs: median(intervals),
      frameIntervalP95Ms: pct(intervals, 95),
      moveHandledMedianMs: median(moveMs),
    },
    saveMs,
    targets: { seekUnderMs: 100, dragFps: 60 },
  };
  fs.mkdirSync(path.join("bench", "results"), { recursive: true });
  fs.writeFileSync(path.join("bench", "results", "editor.json"), JSON.stringify(result, null, 2) + "\n");
  console.log(JSON.stringify(result, null, 2));
} finally {
  await browser.close();
  await server.stop();
  await pg.drop();
}
