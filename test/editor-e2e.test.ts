/**
 * The review editor in Debian's chromium (playwright-core) against the real server on PostgreSQL,
 * on a clip processed by the real engine: the detected boxes are drawn on the video; a box is moved
 * and resized, a new one drawn, undo and redo, save, reload and the edits are there; a track is
 * switched off and the video exported, and the downloaded MP4 leaves that face bare while the other
 * faces are redacted; a reviewer not in the acl is refused. Screenshots go to docs/img with
 * OBSCURA_DOCS_SCREENSHOTS=1.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { runFfmpeg } from "@/server/media";
import { createUser } from "@/server/identity";
import type { Track } from "@/lib/editor/model";
import { boxAt } from "@/lib/editor/model";
import { fileUri, ROOT, startServer, tempDir, tempPostgres, type TestServer } from "./helpers/server";
import { switchDatabase } from "./helpers/database";

const CHROMIUM = process.env.OBSCURA_CHROMIUM ?? "/usr/bin/chromium";
const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
const PASSWORD = "Correct-Horse-42!";
const PROJECT = "editor-test";
const W = 640;
const H = 360;
const shots = () => (process.env.OBSCURA_DOCS_SCREENSHOTS ? path.join(ROOT, "docs", "img") : tempDir("editor-shots"));

/** Frame `n` of an MP4 as RGB bytes (W x H). */
async function frameRgb(file: string, n: number, dir: string): Promise<Buffer> {
  const out = path.join(dir, `f-${path.basename(file)}-${n}.rgb`);
  await runFfmpeg(["-i", file, "-vf", `select=eq(n\\,${n}),scale=${W}:${H}`, "-vsync", "0", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-y", out]);
  return fs.readFileSync(out);
}

/** Mean absolute difference of two RGB frames inside a box. */
function diffIn(a: Buffer, b: Buffer, box: { x: number; y: number; width: number; height: number }): number {
  let sum = 0;
  let n = 0;
  const x0 = Math.max(0, Math.round(box.x + box.width * 0.15));
  const x1 = Math.min(W, Math.round(box.x + box.width * 0.85));
  const y0 = Math.max(0, Math.round(box.y + box.height * 0.15));
  const y1 = Math.min(H, Math.round(box.y + box.height * 0.85));
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) for (let c = 0; c < 3; c++) {
    const i = (y * W + x) * 3 + c;
    sum += Math.abs(a[i]! - b[i]!);
    n++;
  }
  return sum / n;
}

describe.skipIf(!fs.existsSync(CHROMIUM))("review editor in chromium", () => {
  let s: TestServer;
  let drop: () => Promise<void>;
  let browser: Browser;
  let sessionId = "";
  let clip = "";
  let dir = "";

  beforeAll(async () => {
    const pg = await tempPostgres();
    drop = pg.drop;
    s = await startServer({ DATABASE_URL: pg.url, OBSCURA_ADMIN_USER: "chief", OBSCURA_ADMIN_PASSWORD: PASSWORD });
    const restore = await switchDatabase("editor-test", { databaseUrl: pg.url });
    await createUser({ username: "rita", password: PASSWORD, role: "reviewer" }, null);
    await createUser({ username: "tom", password: PASSWORD, role: "reviewer" }, null);
    await restore();
    dir = tempDir("editor-media");
    clip = path.join(dir, "three-faces.mp4");
    await runFfmpeg(["-loop", "1", "-framerate", "25", "-i", SAMPLE, "-t", "2", "-vf", `scale=${W}:-2,crop=${W}:${H}:0:20`, "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip]);
    const r = await s.api("POST", "/api/v1/videos:process", { inputUri: fileUri(clip), features: ["FACE_DETECTION"], projectId: PROJECT, acl: ["rita"] });
    expect(r.status).toBe(200);
    expect((await s.waitDone(r.body.name, 300_000)).error).toBeUndefined();
    sessionId = (await s.api("GET", `/api/v1/projects/${PROJECT}/sessions`)).body.sessions[0].sessionId;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--autoplay-policy=no-user-gesture-required"] });
  });
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
    await drop?.();
  });

  const tracksNow = async (): Promise<{ version: number; tracks: Track[] }> => (await s.api("GET", `/api/v1/projects/${PROJECT}/sessions/${sessionId}`)).body;

  async function signedIn(user: string): Promise<Page> {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    const page = await ctx.newPage();
    await page.goto(`${s.url}/projects/${PROJECT}`); // sends to /signin and back
    await page.fill("#username", user);
    await page.fill("#password", PASSWORD);
    await page.click("button[type=submit]");
    await page.waitForURL(new RegExp(`/projects/${PROJECT}$`));
    return page;
  }

  /** Where a frame-pixel point of the video is on the page. */
  async function screenPoint(page: Page, x: number, y: number): Promise<{ x: number; y: number }> {
    const r = (await page.locator("[data-testid=video-stage]").boundingBox())!;
    return { x: r.x + (x * r.width) / W, y: r.y + (y * r.height) / H };
  }

  /** A mouse drag between two frame-pixel points of the video, in `steps` moves. */
  async function drag(page: Page, x0: number, y0: number, x1: number, y1: number, steps = 5): Promise<void> {
    const a = await screenPoint(page, x0, y0);
    const b = await screenPoint(page, x1, y1);
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move(b.x, b.y, { steps });
    await page.mouse.up();
  }

  /** The overlay canvas's pixel colour at a frame-pixel point. */
  const overlayPixel = (page: Page, x: number, y: number) =>
    page.evaluate(
      ([fx, fy, w]) => {
        const c = document.querySelector("[data-testid=video-stage] .konvajs-content canvas") as HTMLCanvasElement;
        const k = c.width / w!;
        // the most opaque pixel within 2 px (strokes are anti-aliased)
        const d = c.getContext("2d")!.getImageData(Math.round(fx! * k) - 2, Math.round(fy! * k) - 2, 5, 5).data;
        let best = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3]! > d[best + 3]!) best = i;
        return [d[best], d[best + 1], d[best + 2], d[best + 3]];
      },
      [x, y, W],
    );

  it("opens from the project, draws the detected boxes, edits them with undo and redo, saves and keeps the edits over a reload", async () => {
    const before = await tracksNow();
    expect(before.tracks.length).toBeGreaterThanOrEqual(3);
    const page = await signedIn("rita");
    await page.click(`[data-session="${sessionId}"] [data-open-editor]`);
    await page.waitForURL(new RegExp(`/videos/${sessionId}$`));
    await page.waitForSelector("[data-testid=video-stage] canvas");
    await page.waitForFunction(() => document.querySelectorAll("[data-track]").length >= 3);

    // every detected box is drawn in the face colour on its top edge
    for (const t of before.tracks) {
      const b = boxAt(t, 0)!;
      await expect.poll(async () => (await overlayPixel(page, b.x + b.width / 2, b.y))[3], { timeout: 15_000 }).toBeGreaterThan(200);
      const px = await overlayPixel(page, b.x + b.width / 2, b.y);
      expect(px[1]).toBeGreaterThan(150); // green (#22c55e)
    }
    await page.screenshot({ path: path.join(shots(), "editor.png") });

    // move the first box by (+30, +12) frame pixels
    const t0 = before.tracks[0]!;
    const b0 = boxAt(t0, 0)!;
    await drag(page, b0.x + b0.width / 2, b0.y + b0.height / 2, b0.x + b0.width / 2 + 30, b0.y + b0.height / 2 + 12, 8);
    await expect.poll(() => page.textContent("[data-testid=save-state]"), { timeout: 15_000 }).toMatch(/Unsaved/);

    // resize it from the bottom-right corner of the selection (+20, +20)
    await drag(page, b0.x + 30 + b0.width, b0.y + 12 + b0.height, b0.x + 30 + b0.width + 20, b0.y + 12 + b0.height + 20);

    // a drag cancelled with Esc changes nothing (and makes no undo step)
    const mid = await screenPoint(page, b0.x + 30 + b0.width / 2, b0.y + 12 + b0.height / 2);
    await page.mouse.move(mid.x, mid.y);
    await page.mouse.down();
    await page.mouse.move(mid.x + 60, mid.y + 40, { steps: 4 });
    await page.keyboard.press("Escape");
    await page.mouse.up();

    // draw a new box in an empty corner
    await page.click("[data-testid=draw-tool]");
    await drag(page, 20, 280, 90, 340);
    const n = before.tracks.length;
    await expect.poll(() => page.locator("[data-track]").count(), { timeout: 15_000 }).toBe(n + 1);

    // undo removes the drawn box, redo brings it back
    await page.keyboard.press("Control+z");
    await expect.poll(() => page.locator("[data-track]").count(), { timeout: 15_000 }).toBe(n);
    await page.keyboard.press("Control+Shift+z");
    await expect.poll(() => page.locator("[data-track]").count(), { timeout: 15_000 }).toBe(n + 1);

    await page.click("button:has-text('Save')");
    await expect.poll(() => page.textContent("[data-testid=save-state]"), { timeout: 15_000 }).toMatch(/Saved · version/);

    const after = await tracksNow();
    expect(after.version).toBe(before.version + 1);
    const moved = after.tracks.find((t) => t.id === t0.id)!;
    const mb = boxAt(moved, 0)!;
    expect(mb.x).toBeGreaterThan(b0.x + 20);
    expect(mb.x).toBeLessThan(b0.x + 40);
    expect(mb.y).toBeGreaterThan(b0.y + 4);
    expect(mb.width).toBeGreaterThan(b0.width + 10); // resized, and the cancelled drag left no trace
    expect(mb.width).toBeLessThan(b0.width + 30);
    expect(moved.keyframes.some((k) => k.source === "manual" && k.frame === 0)).toBe(true);
    const drawn = after.tracks.find((t) => t.manual)!;
    expect(drawn).toBeDefined();
    expect([drawn.firstFrame, drawn.lastFrame]).toEqual([0, 49]); // static: every frame
    expect(boxAt(drawn, 25)!.x).toBeGreaterThan(10);

    // a reload shows the saved edits
    await page.reload();
    await page.waitForFunction((n) => document.querySelectorAll("[data-track]").length === n, n + 1);
    await expect.poll(async () => (await overlayPixel(page, mb.x + mb.width / 2, mb.y))[3], { timeout: 15_000 }).toBeGreaterThan(200);
    await page.context().close();
  });

  it("steps frames with F/D and the arrows, ends a track with O, deletes with Del, undoes, shows the keys with ?, and live-tracks a drawn box", async () => {
    const page = await signedIn("rita");
    // the video arrives late (a loaded server): keys pressed before it has loaded still count
    let held = true;
    await page.route(/\/media(\?|$)/, async (r) => {
      while (held) await new Promise((res) => setTimeout(res, 100));
      await r.continue();
    });
    await page.goto(`${s.url}/projects/${PROJECT}/videos/${sessionId}`);
    await page.waitForSelector("[data-track]");
    const frameNow = () => page.textContent("[data-testid=frame]");
    await page.locator("[data-testid=video-stage]").hover();
    for (let i = 0; i < 3; i++) await page.keyboard.press("f");
    await expect.poll(frameNow, { timeout: 10_000 }).toBe("3");
    held = false;
    // the video loads (and presents its first picture): the counter stays, the picture follows
    await page.waitForFunction(() => {
      const v = document.querySelector("video");
      return !!v && v.readyState >= 2 && !v.seeking && Math.abs(v.currentTime - 3.5 / 25) < 0.02;
    });
    expect(await frameNow()).toBe("3");
    await page.keyboard.press("ArrowLeft");
    await expect.poll(frameNow, { timeout: 10_000 }).toBe("2");
    await page.keyboard.press("Shift+ArrowRight");
    await expect.poll(frameNow, { timeout: 10_000 }).toBe("12");

    const rows = await page.locator("[data-track]").count();
    const first = page.locator("[data-track]").first();
    const id = await first.getAttribute("data-track");
    await first.click();
    await page.keyboard.press("o");
    await expect.poll(() => page.textContent(`[data-track="${id}"]`), { timeout: 10_000 }).toMatch(/frames 0–12/);
    await page.keyboard.press("Delete");
    await expect.poll(() => page.locator("[data-track]").count(), { timeout: 10_000 }).toBe(rows - 1);
    await page.keyboard.press("Control+z");
    await page.keyboard.press("Control+z");
    await expect.poll(() => page.textContent(`[data-track="${id}"]`), { timeout: 10_000 }).toMatch(/frames 0–49/);

    await page.keyboard.press("?");
    await expect.poll(() => page.locator("[role=dialog][aria-label='Keyboard shortcuts']").textContent(), { timeout: 10_000 }).toMatch(/Keyboard shortcuts.*next frame/);
    await page.keyboard.press("Escape");
    expect(await page.locator("[role=dialog][aria-label='Keyboard shortcuts']").count()).toBe(0);

    // live tracking: draw at frame 12, play, move the pointer across the picture, pause
    await page.selectOption("[data-testid=draw-mode]", "live");
    await page.click("[data-testid=draw-tool]");
    await drag(page, 40, 250, 100, 310);
    await expect.poll(() => page.locator("[data-track]").count(), { timeout: 10_000 }).toBe(rows + 1);
    await page.keyboard.press(" ");
    // move right while it plays, until at least 10 frames went by (a loaded machine starts slowly)
    const until = Date.now() + 15_000;
    for (let i = 0; Date.now() < until; i++) {
      const p = await screenPoint(page, Math.min(500, 80 + i * 8), 280);
      await page.mouse.move(p.x, p.y);
      await page.waitForTimeout(40);
      if (Number(await frameNow()) >= 24 && i >= 20) break;
    }
    await page.keyboard.press(" ");
    await page.click("button:has-text('Save')");
    await expect.poll(() => page.textContent("[data-testid=save-state]"), { timeout: 15_000 }).toMatch(/Saved · version/);
    const live = (await tracksNow()).tracks.filter((t) => t.manual).sort((x, y) => y.id - x.id)[0]!;
    expect(live.firstFrame).toBe(12);
    expect(live.lastFrame).toBeGreaterThan(16);
    expect(live.keyframes.length).toBeGreaterThan(4);
    expect(boxAt(live, live.lastFrame)!.x).toBeGreaterThan(boxAt(live, 12)!.x + 40); // it followed the pointer to the right
    await page.context().close();
  });

  it("switches a track off, exports, and the downloaded MP4 leaves only that face unredacted", async () => {
    const before = await tracksNow();
    const faces = before.tracks.filter((t) => t.type === "face" && !t.manual);
    const off = faces[1]!;
    const page = await signedIn("rita");
    await page.goto(`${s.url}/projects/${PROJECT}/videos/${sessionId}`);
    await page.waitForSelector(`[data-track="${off.id}"]`);
    await page.click(`[data-track="${off.id}"] label`);
    await page.check("[data-testid=preview-toggle]");
    // the preview paints the style (mosaic) from the video's pixels over the redacted boxes
    await page.waitForFunction(() => {
      const c = document.querySelector("[data-testid=preview-canvas]") as HTMLCanvasElement;
      const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
      return n > 1000;
    });
    await page.screenshot({ path: path.join(shots(), "editor-preview.png") });
    await page.click("button:has-text('Export')");
    await page.waitForSelector("[data-testid=download]", { timeout: 240_000 });
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("[data-testid=download]")]);
    const out = path.join(dir, "exported.mp4");
    await download.saveAs(out);
    expect(download.suggestedFilename()).toBe("three-faces-redacted.mp4");

    const saved = await tracksNow();
    expect(saved.tracks.find((t) => t.id === off.id)!.enabled).toBe(false);
    const [src, red] = [await frameRgb(clip, 25, dir), await frameRgb(out, 25, dir)];
    const offDiff = diffIn(src, red, boxAt(off, 25)!);
    expect(offDiff).toBeLessThan(8); // only compression noise: not redacted
    for (const t of saved.tracks.filter((t) => t.type === "face" && t.enabled !== false && !t.manual)) {
      expect(diffIn(src, red, boxAt(t, 25)!)).toBeGreaterThan(offDiff + 6); // redacted (mosaic)
    }
    await page.context().close();
  });

  it("follows a drawn box with the engine (tracks:follow) in the browser, and names bad fields over HTTP", async () => {
    const { tracks } = await tracksNow();
    const face = boxAt(tracks.find((t) => t.type === "face" && !t.manual)!, 10)!;
    const bad = await s.api("POST", `/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks:follow`, { frame: 99, box: face });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/frame 99 is past the video's last frame 49/);
    const tiny = await s.api("POST", `/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks:follow`, { frame: 1, box: { x: 1, y: 1, width: 2, height: 2 }, direction: "sideways" });
    expect(tiny.status).toBe(400);
    expect(tiny.body.error.message).toMatch(/direction must be both, forward or backward/);

    const page = await signedIn("rita");
    await page.goto(`${s.url}/projects/${PROJECT}/videos/${sessionId}`);
    await page.waitForSelector("[data-track]");
    const rows = await page.locator("[data-track]").count();
    await page.locator("[data-testid=video-stage]").hover();
    for (let i = 0; i < 10; i++) await page.keyboard.press("f");
    await expect.poll(() => page.textContent("[data-testid=frame]"), { timeout: 10_000 }).toBe("10");
    await page.selectOption("[data-testid=draw-mode]", "auto");
    await page.click("[data-testid=draw-tool]");
    await drag(page, face.x + 4, face.y + 4, face.x + face.width - 4, face.y + face.height - 4);
    await expect.poll(() => page.locator("[data-track]").count(), { timeout: 10_000 }).toBe(rows + 1);
    // the still picture: the engine follows the face to both ends of the clip
    await expect.poll(() => page.textContent("[data-testid=notice]"), { timeout: 60_000 }).toMatch(/followed from frame 0 to 49/);
    await page.context().close();
  });

  it("never lets two reviewers overwrite each other: the later save gets the conflict message and can reload", async () => {
    const page = await signedIn("rita");
    const other = await page.context().newPage();
    for (const p of [page, other]) {
      await p.goto(`${s.url}/projects/${PROJECT}/videos/${sessionId}`);
      await p.waitForSelector("[data-track]");
    }
    const id = await page.locator("[data-track]").first().getAttribute("data-track");
    await page.click(`[data-track="${id}"] label`);
    await page.click("button:has-text('Save')");
    await expect.poll(() => page.textContent("[data-testid=save-state]"), { timeout: 15_000 }).toMatch(/Saved · version/);
    await other.click(`[data-track="${id}"] label`);
    await other.click("button:has-text('Save')");
    await expect.poll(() => other.textContent("[data-testid=conflict]"), { timeout: 15_000 }).toMatch(/Not saved:.*saved by rita at .* after you opened version/);
    await other.click("button:has-text('Reload their version')");
    await expect.poll(() => other.textContent("[data-testid=save-state]"), { timeout: 15_000 }).toMatch(/Saved · version/);
    await page.context().close();
  });

  it("refuses a reviewer who is not in the video's acl", async () => {
    const page = await signedIn("tom");
    await page.goto(`${s.url}/projects/${PROJECT}/videos/${sessionId}`);
    await expect.poll(() => page.textContent("body"), { timeout: 15_000 }).toMatch(/You do not have access to this video/);
    expect(await page.textContent("[role=alert]")).toMatch(/tom is not in this video's acl/);
    const put = await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks`, { method: "PUT", headers: { "content-type": "application/json", cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ") }, body: JSON.stringify({ version: 1, tracks: [] }) });
    expect(put.status).toBe(403);
    await page.context().close();
  });
});
