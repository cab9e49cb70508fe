/**
 * The session API the review editor uses (docs/sessions.md), over real HTTP against the real
 * server on PostgreSQL: a video processed by the engine with an `acl`, listed and read by a bearer
 * token and by signed-in users (Auth.js cookies), saved with a version check (409 for a stale
 * version), validated, refused to a reviewer not in the acl, and its media served with ranges.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium } from "playwright-core";
import { runFfmpeg } from "@/server/media";
import { createUser } from "@/server/identity";
import { fileUri, ROOT, signIn, startServer, tempDir, tempPostgres, type TestServer } from "./helpers/server";
import { switchDatabase } from "./helpers/database";

const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
const PASSWORD = "Correct-Horse-42!";
const PROJECT = "review-test";

describe("session API for the editor", () => {
  let s: TestServer;
  let drop: () => Promise<void>;
  let rita = "";
  let tom = "";
  let sessionId = "";

  beforeAll(async () => {
    const pg = await tempPostgres();
    drop = pg.drop;
    s = await startServer({ DATABASE_URL: pg.url, OBSCURA_ADMIN_USER: "chief", OBSCURA_ADMIN_PASSWORD: PASSWORD });
    // reviewers, created in the same database the server uses
    const restore = await switchDatabase("sessions-test", { databaseUrl: pg.url });
    await createUser({ username: "rita", password: PASSWORD, role: "reviewer" }, null);
    await createUser({ username: "tom", password: PASSWORD, role: "reviewer" }, null);
    await restore();
    rita = await signIn(s.url, "rita", PASSWORD);
    tom = await signIn(s.url, "tom", PASSWORD);

    const dir = tempDir("sessions-media");
    const clip = path.join(dir, "three-faces.mp4");
    await runFfmpeg(["-loop", "1", "-framerate", "25", "-i", SAMPLE, "-t", "1", "-vf", "scale=640:-2,crop=640:360:0:20", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip]);
    const r = await s.api("POST", "/api/v1/videos:process", { inputUri: fileUri(clip), features: ["FACE_DETECTION"], projectId: PROJECT, acl: ["rita"] });
    expect(r.status).toBe(200);
    const op = await s.waitDone(r.body.name, 300_000);
    expect(op.error).toBeUndefined();
  });
  afterAll(async () => {
    await s?.stop();
    await drop?.();
  });

  const as = (cookie: string | null) => async (method: string, p: string, body?: unknown) => {
    if (!cookie) return s.api(method, p, body);
    const res = await fetch(s.url + p, {
      method,
      headers: { cookie, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };

  it("lists the project's sessions with their media, track counts, version and last operation", async () => {
    const r = await s.api("GET", `/api/v1/projects/${PROJECT}/sessions`);
    expect(r.status).toBe(200);
    expect(r.body.sessions).toHaveLength(1);
    const one = r.body.sessions[0];
    sessionId = one.sessionId;
    expect(one).toMatchObject({
      projectId: PROJECT,
      name: "three-faces.mp4",
      version: 1,
      editedBy: "detection",
      acl: ["rita"],
      media: { width: 640, height: 360, fps: 25, frameCount: 25 },
      trackCounts: { face: 3 },
      operation: { done: true, status: "succeeded", progressPercent: 100 },
    });
    // signed-in reviewers: rita is in the acl, tom is not
    expect((await as(rita)("GET", `/api/v1/projects/${PROJECT}/sessions`)).body.sessions).toHaveLength(1);
    expect((await as(tom)("GET", `/api/v1/projects/${PROJECT}/sessions`)).body.sessions).toHaveLength(0);
    expect((await as(tom)("GET", `/api/v1/projects/${PROJECT}/sessions/${sessionId}`)).status).toBe(403);
    expect((await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions`)).status).toBe(401);
  });

  it("saves edited tracks with a version check: the stale save gets 409 naming who saved", async () => {
    const got = await as(rita)("GET", `/api/v1/projects/${PROJECT}/sessions/${sessionId}`);
    expect(got.status).toBe(200);
    expect(got.body.tracks).toHaveLength(3);
    expect(got.body.frame).toEqual({ width: 640, height: 360, fps: 25, frameCount: 25 });
    const tracks = got.body.tracks;
    tracks[0].enabled = false;
    const drawn = { id: 99, type: "face", firstFrame: 5, lastFrame: 20, manual: true, keyframes: [
      { frame: 5, box: { x: 10, y: 10, width: 40, height: 40 }, score: null, source: "manual" },
      { frame: 20, box: { x: 60, y: 10, width: 40, height: 40 }, score: null, source: "manual" },
    ] };
    const put = await as(rita)("PUT", `/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks`, { version: got.body.version, tracks: [...tracks, drawn] });
    expect(put.status).toBe(200);
    expect(put.body.version).toBe(got.body.version + 1);

    const stale = await s.api("PUT", `/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks`, { version: got.body.version, tracks });
    expect(stale.status).toBe(409);
    expect(stale.body.error.message).toMatch(/saved by rita at .* after you opened version 1: reload it/);

    const reread = await s.api("GET", `/api/v1/projects/${PROJECT}/sessions/${sessionId}`);
    expect(reread.body).toMatchObject({ version: 2, editedBy: "rita", trackCounts: { face: 4 } });
    expect(reread.body.tracks.find((t: { id: number }) => t.id === 99)).toMatchObject({ manual: true, lastFrame: 20 });
    expect(reread.body.tracks[0].enabled).toBe(false);
    // the state files were rewritten: objects.jsonl has the drawn box on frame 12, interpolated
    const stateDir = path.join(s.dataDir, "sessions", sessionId);
    const frame12 = fs.readFileSync(path.join(stateDir, "objects.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.frame === 12);
    expect(frame12.objects.find((o: { trackId: number }) => o.trackId === 99).boundingBox).toMatchObject({ x: 33.3, width: 40 });
  });

  it("refuses malformed tracks naming the field, and frames past the video", async () => {
    const bad = await s.api("PUT", `/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks`, {
      version: 2,
      tracks: [{ id: 1, type: "face", firstFrame: 10, lastFrame: 5, keyframes: [{ frame: 10, box: { x: 0, y: 0, width: 10, height: 10 }, score: 1, source: "detected" }] }],
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error)).toMatch(/lastFrame \(5\) must not be before firstFrame \(10\)/);
    const past = await s.api("PUT", `/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks`, {
      version: 2,
      tracks: [{ id: 1, type: "face", firstFrame: 0, lastFrame: 400, keyframes: [{ frame: 0, box: { x: 0, y: 0, width: 10, height: 10 }, score: 1, source: "detected" }] }],
    });
    expect(past.status).toBe(400);
    expect(past.body.error.message).toMatch(/after the video's last frame 24/);
    expect((await s.api("GET", `/api/v1/projects/${PROJECT}/sessions/nope`)).status).toBe(404);
  });

  it("keeps tracks saved while a render of the same session runs", async () => {
    const internal = fileUri(path.join(s.dataDir, "sessions", sessionId)) + "/";
    const before = await s.api("GET", `/api/v1/projects/${PROJECT}/sessions/${sessionId}`);
    const r = await s.api("POST", "/api/v1/videos:process", { inputUri: internal, features: ["MEDIA_RENDER"], projectId: PROJECT });
    expect(r.status).toBe(200);
    // save once the operation has fetched the state (the leak check after the render takes seconds)
    for (;;) {
      const op = (await s.api("GET", `/api/v1/${r.body.name}`)).body;
      if (op.done) throw new Error("the render finished before the save could land");
      if (op.metadata.progress.progressPercent >= 50) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    const tracks = before.body.tracks.filter((t: { id: number }) => t.id !== 99); // the reviewer removes the drawn box
    const put = await s.api("PUT", `/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks`, { version: before.body.version, tracks });
    expect(put.status).toBe(200);
    expect((await s.waitDone(r.body.name, 300_000)).error).toBeUndefined();
    const after = await s.api("GET", `/api/v1/projects/${PROJECT}/sessions/${sessionId}`);
    expect(after.body.version).toBe(put.body.version);
    expect(after.body.tracks.map((t: { id: number }) => t.id)).toEqual(tracks.map((t: { id: number }) => t.id));
    expect(after.body.trackCounts).toEqual({ face: 3 }); // the render did not write its stale counts back
  });

  it("serves the source video with byte ranges for the player", async () => {
    const res = await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}/media`, { headers: { cookie: rita, range: "bytes=0-99" } });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-type")).toBe("video/mp4");
    expect(res.headers.get("content-range")).toMatch(/^bytes 0-99\/\d+$/);
    const size = Number(res.headers.get("content-range")!.split("/")[1]);
    expect((await res.arrayBuffer()).byteLength).toBe(100);
    const whole = await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}/media`, { headers: { cookie: rita } });
    expect(whole.status).toBe(200);
    expect((await whole.arrayBuffer()).byteLength).toBe(size);
    const tail = await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}/media`, { headers: { cookie: rita, range: "bytes=-10" } });
    expect(tail.headers.get("content-range")).toBe(`bytes ${size - 10}-${size - 1}/${size}`);
    expect((await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}/media`, { headers: { cookie: rita, range: `bytes=${size + 5}-` } })).status).toBe(416);
    expect((await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}/media`, { headers: { cookie: tom } })).status).toBe(403);
  });

  it.skipIf(!fs.existsSync("/usr/bin/chromium"))("shows the project's videos to a signed-in reviewer in the browser, and none to one not in the acl", async () => {
    const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
    try {
      for (const [user, cards] of [["rita", 1], ["tom", 0]] as const) {
        const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
        await page.goto(`${s.url}/projects/${PROJECT}`);
        expect(new URL(page.url()).pathname).toBe("/signin");
        await page.fill("#username", user);
        await page.fill("#password", PASSWORD);
        await page.click("button[type=submit]");
        await page.waitForURL(new RegExp(`/projects/${PROJECT}$`));
        expect(await page.locator("[data-session]").count()).toBe(cards);
        if (cards) {
          const card = page.locator(`[data-session="${sessionId}"]`);
          expect(await card.textContent()).toMatch(/three-faces\.mp4.*3 faces.*Last edit .* by api-token/); // the last save, by the bootstrap token
          await page.waitForFunction(() => [...document.images].every((i) => i.complete && i.naturalWidth > 0));
          const shots = process.env.OBSCURA_DOCS_SCREENSHOTS ? path.join(ROOT, "docs", "img") : tempDir("project-shots");
          await page.screenshot({ path: path.join(shots, "project-view.png") });
        } else expect(await page.locator("main").textContent()).toMatch(/No videos here yet/);
        await page.close();
      }
    } finally {
      await browser.close();
    }
  });
});
