/**
 * Embedding the editor (docs/embedding.md) over real HTTP and in chromium: embed tokens minted by
 * an admin credential, refused to reviewers and for bad fields; what a token may read and write
 * (its project, its session, reads by URL only); expired and tampered tokens; the CSP
 * frame-ancestors header; and the editor inside an iframe of a page on another loopback origin,
 * posting ready / saved / exportStarted / exportDone to it, while an origin not allowed cannot frame it.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { SignJWT } from "jose";
import { runFfmpeg } from "@/server/media";
import { createUser } from "@/server/identity";
import { embedOrigins, frameAncestorsPolicy, mintEmbedToken, parseOrigin } from "@/server/embed/tokens";
import { fileUri, ROOT, startServer, tempDir, tempPostgres, type TestServer } from "./helpers/server";
import { freePort } from "./helpers/storage-servers";
import { switchDatabase } from "./helpers/database";

const CHROMIUM = process.env.OBSCURA_CHROMIUM ?? "/usr/bin/chromium";
const SAMPLE = path.resolve("node_modules/@vladmandic/face-api/demo/sample1.jpg");
const PASSWORD = "Correct-Horse-42!";
const PROJECT = "embed-test";
const AUTH_SECRET = crypto.randomBytes(32).toString("base64url");

describe("embed origins", () => {
  it("parses origins, refuses anything else, and builds the frame-ancestors policy", () => {
    expect(parseOrigin("https://portal.example.com")).toBe("https://portal.example.com");
    expect(parseOrigin("http://localhost:8080/")).toBe("http://localhost:8080");
    expect(parseOrigin("https://x.example/path")).toBeNull();
    expect(parseOrigin("ftp://x.example")).toBeNull();
    expect(embedOrigins("https://a.example, http://localhost:3000 ")).toEqual(["https://a.example", "http://localhost:3000"]);
    expect(() => embedOrigins("https://a.example/app")).toThrow(/OBSCURA_EMBED_ORIGINS: "https:\/\/a.example\/app" is not an origin/);
    expect(frameAncestorsPolicy([])).toBe("frame-ancestors 'self'");
    expect(frameAncestorsPolicy(["https://a.example"])).toBe("frame-ancestors 'self' https://a.example");
  });

  it("refuses to mint while embedding is off, naming the variable", async () => {
    const saved = process.env.OBSCURA_EMBED_ORIGINS;
    delete process.env.OBSCURA_EMBED_ORIGINS;
    try {
      await expect(mintEmbedToken({ kind: "bootstrap", id: "bootstrap", name: "api-token", role: "api" }, { username: "rita", projectId: "p", origin: "https://a.example" }, "http://x")).rejects.toThrow(/embedding is off: set OBSCURA_EMBED_ORIGINS/);
    } finally {
      if (saved !== undefined) process.env.OBSCURA_EMBED_ORIGINS = saved;
    }
  });
});

describe("embedded editor", () => {
  let s: TestServer;
  let drop: () => Promise<void>;
  let browser: Browser | null = null;
  let hostPort = 0;
  let host: http.Server;
  let sessionId = "";
  let hostOrigin = "";

  beforeAll(async () => {
    hostPort = await freePort();
    hostOrigin = `http://localhost:${hostPort}`;
    const pg = await tempPostgres();
    drop = pg.drop;
    s = await startServer({ DATABASE_URL: pg.url, OBSCURA_ADMIN_USER: "chief", OBSCURA_ADMIN_PASSWORD: PASSWORD, OBSCURA_EMBED_ORIGINS: hostOrigin, AUTH_SECRET });
    const restore = await switchDatabase("embed-test", { databaseUrl: pg.url });
    await createUser({ username: "rita", password: PASSWORD, role: "reviewer" }, null);
    await restore();
    const clip = path.join(tempDir("embed-media"), "three-faces.mp4");
    await runFfmpeg(["-loop", "1", "-framerate", "25", "-i", SAMPLE, "-t", "1", "-vf", "scale=640:-2,crop=640:360:0:20", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip]);
    const r = await s.api("POST", "/api/v1/videos:process", { inputUri: fileUri(clip), features: ["FACE_DETECTION"], projectId: PROJECT, acl: ["rita"] });
    expect((await s.waitDone(r.body.name, 300_000)).error).toBeUndefined();
    sessionId = (await s.api("GET", `/api/v1/projects/${PROJECT}/sessions`)).body.sessions[0].sessionId;
    // the host product's page, on another origin: the iframe URL comes in the query
    host = http.createServer((req, res) => {
      const src = new URL(req.url!, hostOrigin).searchParams.get("src") ?? "";
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><title>host</title><h1>Case 1234</h1>
<iframe id="obscura" src="${src.replace(/"/g, "&quot;")}" style="width:1300px;height:800px;border:0"></iframe>
<script>
window.events = [];
window.addEventListener("message", (e) => { if (e.origin === ${JSON.stringify(s.url)} && e.data && e.data.source === "obscura") window.events.push(e.data); });
</script>`);
    });
    await new Promise<void>((r) => host.listen(hostPort, "127.0.0.1", () => r()));
    if (fs.existsSync(CHROMIUM)) browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => host?.close(r));
    await s?.stop();
    await drop?.();
  });

  const mint = (body: Record<string, unknown>) => s.api("POST", "/api/v1/embed-tokens", body);
  const withToken = async (token: string, method: string, p: string, body?: unknown) => {
    const res = await fetch(s.url + p, { method, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };

  it("mints tokens for admins and API tokens only, and names a bad field", async () => {
    const ok = await mint({ username: "rita", projectId: PROJECT, sessionId, origin: hostOrigin, ttlSeconds: 600 });
    expect(ok.status).toBe(201);
    expect(ok.body.token).toMatch(/^eyJ/);
    expect(ok.body.url).toBe(`${s.url}/embed/projects/${PROJECT}/videos/${sessionId}?token=${ok.body.token}`);
    expect(Date.parse(ok.body.expiresAt) - Date.now()).toBeGreaterThan(590_000);

    const bad = async (body: Record<string, unknown>, field: string, re: RegExp) => {
      const r = await mint(body);
      expect(r.status).toBe(400);
      expect(r.body.error.message).toMatch(re);
      expect(r.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    };
    await bad({ username: "nobody", projectId: PROJECT, origin: hostOrigin }, "username", /no active user "nobody"/);
    await bad({ username: "rita", projectId: PROJECT, origin: "https://evil.example" }, "origin", new RegExp(`"https://evil.example" is not allowed to embed; allowed: ${hostOrigin}`));
    await bad({ username: "rita", projectId: PROJECT, origin: hostOrigin, ttlSeconds: 5 }, "ttlSeconds", /at least 60/);
    await bad({ username: "rita", projectId: PROJECT, origin: hostOrigin, extra: 1 }, "extra", /extra/);

    // a reviewer cannot mint, nor can an embed token, not even an administrator's
    const rita = await withToken(ok.body.token, "POST", "/api/v1/embed-tokens", { username: "rita", projectId: PROJECT, origin: hostOrigin });
    expect(rita.status).toBe(403);
    const chiefToken = (await mint({ username: "chief", projectId: PROJECT, origin: hostOrigin })).body.token;
    const chief = await withToken(chiefToken, "POST", "/api/v1/embed-tokens", { username: "rita", projectId: PROJECT, origin: hostOrigin });
    expect(chief.status).toBe(403);
    expect(chief.body.error.message).toMatch(/not embed tokens/);
  });

  it("lets a token read and save its session only, reads by URL only, and never reach the processing API", async () => {
    const { token } = (await mint({ username: "rita", projectId: PROJECT, sessionId, origin: hostOrigin })).body;
    const list = await withToken(token, "GET", `/api/v1/projects/${PROJECT}/sessions`);
    expect(list.status).toBe(200);
    expect(list.body.sessions.map((x: { sessionId: string }) => x.sessionId)).toEqual([sessionId]);
    const one = await withToken(token, "GET", `/api/v1/projects/${PROJECT}/sessions/${sessionId}`);
    expect(one.status).toBe(200);
    const put = await withToken(token, "PUT", `/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks`, { version: one.body.version, tracks: one.body.tracks });
    expect(put.status).toBe(200);
    expect((await s.api("GET", `/api/v1/projects/${PROJECT}/sessions/${sessionId}`)).body.editedBy).toBe("rita");

    const media = await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}/media?embed_token=${token}`, { headers: { range: "bytes=0-99" } });
    expect(media.status).toBe(206);
    const thumb = await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}/frame?frame=3&x=10&y=10&w=40&h=40&embed_token=${token}`);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("content-type")).toBe("image/jpeg");
    const putByUrl = await fetch(`${s.url}/api/v1/projects/${PROJECT}/sessions/${sessionId}/tracks?embed_token=${token}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ version: 0, tracks: [] }) });
    expect(putByUrl.status).toBe(401);
    expect((await putByUrl.json()).error.message).toMatch(/for reads only/);

    expect((await withToken(token, "GET", `/api/v1/projects/other-project/sessions`)).status).toBe(403);
    const otherSession = await withToken(token, "GET", `/api/v1/projects/${PROJECT}/sessions/${crypto.randomUUID()}`);
    expect(otherSession.status).toBe(403);
    expect(otherSession.body.error.message).toMatch(/this embed token is for session/);
    const proc = await withToken(token, "POST", "/api/v1/videos:process", { inputUri: "file:///tmp/x.mp4", features: ["FACE_DETECTION"] });
    expect(proc.status).toBe(401);
  });

  it("refuses expired and tampered tokens", async () => {
    const { token } = (await mint({ username: "rita", projectId: PROJECT, origin: hostOrigin })).body;
    const [h, p, sig] = token.split(".");
    const payload = JSON.parse(Buffer.from(p, "base64url").toString());
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, pid: "other-project" })).toString("base64url")}.${sig}`;
    const t = await withToken(tampered, "GET", `/api/v1/projects/other-project/sessions`);
    expect(t.status).toBe(401);
    expect(t.body.error.message).toMatch(/embed token invalid/);
    // the same key the server derives from AUTH_SECRET, a token that expired a minute ago
    const key = new Uint8Array(crypto.hkdfSync("sha256", Buffer.from(AUTH_SECRET), Buffer.alloc(0), Buffer.from("obscura-embed-token/v1"), 32));
    const expired = await new SignJWT({ ...payload, exp: undefined }).setProtectedHeader({ alg: "HS256" }).setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(key);
    const e = await withToken(expired, "GET", `/api/v1/projects/${PROJECT}/sessions`);
    expect(e.status).toBe(401);
    expect(e.body.error.message).toMatch(/embed token expired at \d{4}-/);
    const page = await fetch(`${s.url}/embed/projects/${PROJECT}?token=${expired}`);
    expect(await page.text()).toMatch(/embed token expired at/);
  });

  it("sends frame-ancestors with the configured origins on every page", async () => {
    for (const p of ["/signin", `/embed/projects/${PROJECT}`, "/api/v1/projects/x/sessions"]) {
      const r = await fetch(s.url + p);
      expect(r.headers.get("content-security-policy")).toBe(`frame-ancestors 'self' ${hostOrigin}`);
    }
  });

  it.skipIf(!fs.existsSync(CHROMIUM))("works inside an iframe on another origin and posts its events there; other origins cannot frame it", async () => {
    const minted = (await mint({ username: "rita", projectId: PROJECT, origin: hostOrigin })).body;
    const page = await browser!.newPage({ viewport: { width: 1400, height: 900 } });
    // the project list inside the frame, then a video
    await page.goto(`${hostOrigin}/?src=${encodeURIComponent(minted.url)}`);
    const frame = page.frameLocator("#obscura");
    await frame.locator(`[data-session="${sessionId}"] [data-open-editor]`).click();
    await frame.locator("[data-track]").first().waitFor({ timeout: 60_000 });
    const events = () => page.evaluate(() => (window as unknown as { events: Array<{ type: string }> }).events);
    await expect.poll(async () => (await events()).map((e) => e.type), { timeout: 30_000 }).toContain("ready");

    const first = frame.locator("[data-track]").first();
    await first.locator("label").click();
    await frame.locator("button:has-text('Save')").click();
    await expect.poll(async () => (await events()).find((e) => e.type === "saved"), { timeout: 30_000 }).toMatchObject({ source: "obscura", type: "saved", projectId: PROJECT, sessionId });
    await page.screenshot({ path: path.join(process.env.OBSCURA_DOCS_SCREENSHOTS ? path.join(ROOT, "docs", "img") : tempDir("embed-shots"), "embedded.png") });

    await frame.locator("button:has-text('Export')").click();
    await expect.poll(async () => (await events()).find((e) => e.type === "exportDone"), { timeout: 240_000 }).toMatchObject({ type: "exportDone", status: "succeeded" });
    const all = await events();
    const started = all.find((e) => e.type === "exportStarted") as unknown as { operation: string };
    expect(started.operation).toMatch(new RegExp(`^projects/${PROJECT}/locations/.+/operations/`));
    const done = all.find((e) => e.type === "exportDone") as unknown as { downloadUrl: string };
    const mp4 = await fetch(done.downloadUrl);
    expect(mp4.status).toBe(200);
    expect(mp4.headers.get("content-type")).toBe("video/mp4");

    // a page on an origin that is not allowed gets no editor in its frame
    const otherPort = await freePort();
    const other = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><iframe id="obscura" src="${minted.url}"></iframe>`);
    });
    await new Promise<void>((r) => other.listen(otherPort, "127.0.0.1", () => r()));
    try {
      const p2 = await browser!.newPage();
      await p2.goto(`http://localhost:${otherPort}/`);
      await p2.waitForTimeout(3000);
      expect(await p2.frameLocator("#obscura").locator("[data-session]").count()).toBe(0);
      await p2.close();
    } finally {
      await new Promise((r) => other.close(r));
    }
    await page.close();
  });
});
