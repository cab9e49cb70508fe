/**
 * Uploads from the browser (docs/sessions.md#uploading-from-the-browser), over real HTTP with the
 * tus protocol and in chromium: an upload in chunks, interrupted and resumed from the offset the
 * server reports, then processed by the engine like videos:process; an image redacted like
 * images:process and downloaded; wrong type, too large,
 * incomplete and someone else's upload refused; and a reviewer with no project yet who drops a
 * video on the home page, watches it upload and lands on the project with the new video.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium } from "playwright-core";
import { runFfmpeg } from "@/server/media";
import { createUser } from "@/server/identity";
import { ROOT, signIn, startServer, tempDir, tempPostgres, type TestServer } from "./helpers/server";
import { switchDatabase } from "./helpers/database";

const CHROMIUM = process.env.OBSCURA_CHROMIUM ?? "/usr/bin/chromium";
const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
const PASSWORD = "Correct-Horse-42!";
const PROJECT = "upload-test";
const MAX = 30 * 1024 * 1024;
const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("uploads from the browser", () => {
  let s: TestServer;
  let drop: () => Promise<void>;
  let clip = "";
  let rita = "";
  let tom = "";

  beforeAll(async () => {
    const pg = await tempPostgres();
    drop = pg.drop;
    s = await startServer({ DATABASE_URL: pg.url, OBSCURA_ADMIN_USER: "chief", OBSCURA_ADMIN_PASSWORD: PASSWORD, OBSCURA_UPLOAD_MAX_BYTES: String(MAX) });
    const restore = await switchDatabase("uploads-test", { databaseUrl: pg.url });
    await createUser({ username: "rita", password: PASSWORD, role: "reviewer" }, null);
    await createUser({ username: "tom", password: PASSWORD, role: "reviewer" }, null);
    await restore();
    rita = await signIn(s.url, "rita", PASSWORD);
    tom = await signIn(s.url, "tom", PASSWORD);
    clip = path.join(tempDir("upload-media"), "street interview.mp4");
    // noisy so the file is a few MB and goes up in several chunks
    await runFfmpeg(["-loop", "1", "-framerate", "25", "-i", SAMPLE, "-t", "2", "-vf", "scale=640:-2,crop=640:360:0:20,noise=alls=40:allf=t", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "12", "-pix_fmt", "yuv420p", clip]);
  });
  afterAll(async () => {
    await s?.stop();
    await drop?.();
  });

  const tusCall = (cookie: string, method: string, url: string, headers: Record<string, string> = {}, bytes?: Uint8Array) =>
    fetch(url.startsWith("http") ? url : s.url + url, { method, headers: { cookie, "tus-resumable": "1.0.0", ...headers }, body: bytes ? new Blob([new Uint8Array(bytes)]) : undefined });

  it("takes a video in chunks, resumes from the server's offset after an interruption, and processes it like videos:process", async () => {
    const data = fs.readFileSync(clip);
    expect(data.length).toBeGreaterThan(1_000_000);
    const created = await tusCall(rita, "POST", `/api/v1/projects/${PROJECT}/uploads`, { "upload-length": String(data.length), "upload-metadata": `filename ${b64(path.basename(clip))},filetype ${b64("video/mp4")}` });
    expect(created.status).toBe(201);
    const location = created.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^/api/v1/projects/${PROJECT}/uploads/[0-9a-f-]{36}$`));

    const chunk = 400_000;
    const patch = (offset: number, bytes: Uint8Array) => tusCall(rita, "PATCH", location, { "upload-offset": String(offset), "content-type": "application/offset+octet-stream" }, bytes);
    let r = await patch(0, data.subarray(0, chunk));
    expect(r.status).toBe(204);
    expect(r.headers.get("upload-offset")).toBe(String(chunk));
    // the client goes away; an early :process says how much is missing
    const early = await fetch(`${s.url}${location}:process`, { method: "POST", headers: { cookie: rita, "content-type": "application/json" }, body: JSON.stringify({ features: ["FACE_DETECTION"] }) });
    expect(early.status).toBe(400);
    expect((await early.json()).error.message).toMatch(new RegExp(`not complete: ${data.length - chunk} of ${data.length} bytes are missing`));
    // someone else cannot see or continue it
    expect((await tusCall(tom, "HEAD", location)).status).toBe(404);
    // back again: HEAD tells where to continue; a wrong offset is refused
    const head = await tusCall(rita, "HEAD", location);
    expect(head.status).toBe(200);
    let offset = Number(head.headers.get("upload-offset"));
    expect(offset).toBe(chunk);
    expect((await patch(0, data.subarray(0, chunk))).status).toBe(409);
    while (offset < data.length) {
      r = await patch(offset, data.subarray(offset, offset + chunk));
      expect(r.status).toBe(204);
      offset = Number(r.headers.get("upload-offset"));
    }

    const bad = await fetch(`${s.url}${location}:process`, { method: "POST", headers: { cookie: rita, "content-type": "application/json" }, body: JSON.stringify({ features: ["FACE_DETECTION", "NOSE_DETECTION"] }) });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/NOSE_DETECTION/); // the API's own validation
    const started = await fetch(`${s.url}${location}:process`, { method: "POST", headers: { cookie: rita, "content-type": "application/json" }, body: JSON.stringify({ features: ["FACE_DETECTION"] }) });
    expect(started.status).toBe(200);
    const { name, sessionId } = (await started.json()) as { name: string; sessionId: string };
    expect((await s.waitDone(name, 300_000)).error).toBeUndefined();
    const again = await fetch(`${s.url}${location}:process`, { method: "POST", headers: { cookie: rita, "content-type": "application/json" }, body: JSON.stringify({ features: ["FACE_DETECTION"] }) });
    expect(again.status).toBe(404);

    // the uploader (a reviewer) sees it, with its name and the faces found
    const mine = await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}`, { headers: { cookie: rita } });
    expect(mine.status).toBe(200);
    const session = await mine.json();
    expect(session.name).toBe("street interview.mp4");
    expect(session.acl).toEqual(["rita"]);
    expect(session.trackCounts.face).toBeGreaterThanOrEqual(2);
    expect((await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}`, { headers: { cookie: tom } })).status).toBe(403);
  });

  it("redacts an uploaded image like images:process and offers the JPG", async () => {
    const data = fs.readFileSync(SAMPLE);
    const created = await tusCall(rita, "POST", `/api/v1/projects/${PROJECT}/uploads`, { "upload-length": String(data.length), "upload-metadata": `filename ${b64("party.jpg")}` });
    expect(created.status).toBe(201);
    const location = created.headers.get("location")!;
    expect((await tusCall(rita, "PATCH", location, { "upload-offset": "0", "content-type": "application/offset+octet-stream" }, data)).status).toBe(204);
    // the panel's single feature list may hold video-only features: an image leaves them out
    const started = await fetch(`${s.url}${location}:process`, { method: "POST", headers: { cookie: rita, "content-type": "application/json" }, body: JSON.stringify({ features: ["FACE_DETECTION", "SPEECH_TRANSCRIPTION"] }) });
    expect(started.status).toBe(200);
    const body = await started.json();
    expect(body).toMatchObject({ kind: "image", resultUrl: location });
    let result: { operation: { done: boolean; error: string | null }; downloadUrl: string | null };
    for (;;) {
      result = await (await fetch(s.url + body.resultUrl, { headers: { cookie: rita } })).json();
      if (result.operation.done) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(result.operation.error).toBeNull();
    expect(result.downloadUrl).toBe(`${location}/party-redacted.jpg`);
    const jpg = await fetch(s.url + result.downloadUrl, { headers: { cookie: rita } });
    expect(jpg.status).toBe(200);
    const bytes = Buffer.from(await jpg.arrayBuffer());
    expect(bytes.subarray(0, 2).toString("hex")).toBe("ffd8");
    expect(bytes.equals(data)).toBe(false);
    expect((await fetch(s.url + result.downloadUrl, { headers: { cookie: tom } })).status).toBe(404);
  });

  it("refuses other file types and files over the limit, naming why", async () => {
    const create = (name: string, size: number) => tusCall(rita, "POST", `/api/v1/projects/${PROJECT}/uploads`, { "upload-length": String(size), "upload-metadata": `filename ${b64(name)}` });
    const txt = await create("notes.txt", 10);
    expect(txt.status).toBe(415);
    expect((await txt.json()).error.message).toMatch(/"notes.txt" is not a video or image this server processes: use \.mp4, .*\.png/);
    const big = await create("huge.mp4", MAX + 1);
    expect(big.status).toBe(413);
    expect((await big.json()).error.message).toMatch(/larger than this server accepts \(31457280 bytes, OBSCURA_UPLOAD_MAX_BYTES\)/);
    const anonymous = await fetch(`${s.url}/api/v1/projects/${PROJECT}/uploads`, { method: "POST", headers: { "tus-resumable": "1.0.0", "upload-length": "10", "upload-metadata": `filename ${b64("a.mp4")}` } });
    expect(anonymous.status).toBe(401);
  });

  it.skipIf(!fs.existsSync(CHROMIUM))("lets a reviewer with no project drop a video on the home page and see it processed in the new project", async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await page.goto(`${s.url}/signin`);
      await page.fill("#username", "tom"); // tom has no project yet
      await page.fill("#password", PASSWORD);
      await page.click("button[type=submit]");
      await page.waitForSelector("[data-testid=upload-panel]");
      await page.fill("#upload-project", "first-project");
      // a real drop event carrying the file, as a drag from the desktop makes
      const bytes = fs.readFileSync(clip).toString("base64");
      await page.evaluate(async (b64data) => {
        const bin = Uint8Array.from(atob(b64data), (c) => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([bin], "dropped.mp4", { type: "video/mp4" }));
        const zone = document.querySelector("[data-testid=drop-zone]")!;
        zone.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
        zone.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
      }, bytes);
      await page.waitForSelector("[data-upload='dropped.mp4']");
      const shots = process.env.OBSCURA_DOCS_SCREENSHOTS ? path.join(ROOT, "docs", "img") : tempDir("upload-shots");
      await page.screenshot({ path: path.join(shots, "upload.png") });
      await page.waitForURL(/\/projects\/first-project$/, { timeout: 60_000 });
      await page.waitForSelector("[data-session]");
      expect(await page.textContent("[data-session]")).toMatch(/dropped\.mp4/);
      // the card shows progress, then what was found
      await page.waitForFunction(() => /faces?/.test(document.querySelector("[data-session]")?.textContent ?? ""), null, { timeout: 240_000 });

      // a second file through the picker on the project page
      await page.setInputFiles("[data-testid=file-input]", { name: "picked.mp4", mimeType: "video/mp4", buffer: fs.readFileSync(clip) });
      await page.waitForFunction(() => document.querySelectorAll("[data-session]").length === 2, null, { timeout: 60_000 });
    } finally {
      await browser.close();
    }
  });
});
