/**
 * Every storage scheme through the real API: one server (embedded PGlite) started as a child process,
 * with a real s3rver and a real azurite-blob next to it, plus local http/https servers for inputs.
 * Each test polls its operations to done and checks what was actually stored.
 *
 *   S3 in and out (file outputs, an image into a "folder"), an S3 state bucket reloaded without the
 *   original, Azure blob SAS in/out and a container-SAS state bucket (SAS signatures never shown),
 *   http and self-signed https inputs (ignoreCertificateErrors), the Windows file:///C:/ form mapped
 *   under OBSCURA_WINDOWS_DRIVE_ROOT, and NOT_FOUND errors for missing S3 keys and http 404s.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import type net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { imageInfo, probe } from "@/server/media";
import { downloadToFile, exists, listPrefix, readBytes, removePrefix, resetS3Client, uploadFile } from "@/server/storage";
import { makeTestImage, makeTestVideo } from "./helpers/fixtures";
import { fileUri, startServer, tempDir, type TestServer } from "./helpers/server";
import { startAzurite, startS3rver } from "./helpers/storage-servers";

type S3 = Awaited<ReturnType<typeof startS3rver>>;
type Azurite = Awaited<ReturnType<typeof startAzurite>>;

/** Serves `routes` (path -> file) over http or https on loopback; anything else answers 404. */
async function serveFiles(
  routes: Record<string, string>,
  tls?: { key: Buffer; cert: Buffer },
): Promise<{ base: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const handler: http.RequestListener = (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const file = routes[req.url ?? ""];
    if (!file) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const size = fs.statSync(file).size;
    res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
    if (req.method === "HEAD") res.end();
    else fs.createReadStream(file).pipe(res);
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    base: `${tls ? "https" : "http"}://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The raw (as written in the URL) and decoded values of the `sig` parameter of a SAS URL. */
function sigValues(sasUrl: string): string[] {
  const raw = /[?&]sig=([^&#]*)/.exec(sasUrl)?.[1];
  if (!raw) throw new Error(`no sig= in ${sasUrl}`);
  return [...new Set([raw, decodeURIComponent(raw)])];
}

const haveOpenssl = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
if (!haveOpenssl) console.warn("openssl CLI not found: skipping the self-signed https input case of api-storage.test.ts");

describe("storage schemes through the API", () => {
  let s: TestServer;
  let s3: S3;
  let az: Azurite;
  let dir: string;
  let winRoot: string;
  let video: string;
  let photo: string;
  const savedEnv: Record<string, string | undefined> = {};
  const s3uri = (key: string) => `s3://${s3.bucket}/${key}`;

  beforeAll(async () => {
    dir = tempDir("api-storage");
    winRoot = tempDir("win-drives");
    video = path.join(dir, "clip.mp4");
    photo = path.join(dir, "photo.jpg");
    [s3, az] = await Promise.all([
      startS3rver(),
      startAzurite(),
      makeTestVideo(video, { seconds: 2, width: 320, height: 240, audio: true }),
      makeTestImage(photo, { width: 200, height: 100, format: "jpeg" }),
    ]);
    // the test process seeds and checks S3 with the same client code as the server
    for (const [k, v] of Object.entries(s3.env)) {
      savedEnv[k] = process.env[k];
      process.env[k] = v;
    }
    resetS3Client();
    s = await startServer({ ...s3.env, OBSCURA_WINDOWS_DRIVE_ROOT: winRoot });
  });

  afterAll(async () => {
    await s?.stop();
    await Promise.all([s3?.stop(), az?.stop()]);
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    resetS3Client();
    for (const d of [dir, winRoot, s?.dataDir]) if (d) await fsp.rm(d, { recursive: true, force: true });
  });

  /** POSTs, polls to done and fails with the operation's error when one was not expected. */
  async function run(kind: "videos" | "images", body: Record<string, unknown>, expectError = false): Promise<any> {
    const r = await s.api("POST", `/api/v1/${kind}:process`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const op = await s.waitDone(r.body.name, 60_000);
    if (!expectError) expect(op.error, JSON.stringify(op.error)).toBeUndefined();
    return op;
  }

  async function probeRemote(uri: string, name: string) {
    const local = path.join(dir, "downloads", name);
    await downloadToFile(uri, local);
    return probe(local);
  }

  it("reads a video from S3 and writes the redacted MP4 to S3; an image into an S3 folder as image.jpg", async () => {
    const input = s3uri("in/clip.mp4");
    const output = s3uri("out/redacted.mp4");
    await uploadFile(video, input);
    const op = await run("videos", { inputUri: input, features: ["FACE_DETECTION", "MEDIA_RENDER"], outputUri: output });
    expect(op).toMatchObject({
      done: true,
      metadata: { progress: { inputUri: input, progressPercent: 100 } },
      response: { processResults: { outputUri: output } },
    });
    const info = await probeRemote(output, "s3-redacted.mp4");
    expect(info.video.codec).toBe("h264");
    expect(info.audio?.codec).toBe("aac");
    expect(info.video.width).toBe(320);
    expect(info.durationSeconds).toBeGreaterThan(1.8);
    // a file outputUri writes only that file
    expect(await listPrefix(s3uri("out/"))).toEqual(["redacted.mp4"]);

    // keys are literal: spaces and a stray "%" are part of the name
    const odd = s3uri("in/100% take one.mp4");
    await uploadFile(video, odd);
    const oddOp = await run("videos", { inputUri: odd, features: ["MEDIA_RENDER"], outputUri: s3uri("out-odd/50% done.mp4") });
    expect(oddOp.response.processResults.outputUri).toBe(s3uri("out-odd/50% done.mp4"));
    expect(await listPrefix(s3uri("out-odd/"))).toEqual(["50% done.mp4"]);

    const imgIn = s3uri("img-in/photo.jpg");
    await uploadFile(photo, imgIn);
    const iop = await run("images", { inputUri: imgIn, features: ["FACE_DETECTION", "MEDIA_RENDER"], outputUri: s3uri("img/") });
    expect(iop.response.processResults.outputUri).toBe(s3uri("img/image.jpg"));
    expect(await listPrefix(s3uri("img/"))).toEqual(["image.jpg"]);
    const jpg = path.join(dir, "downloads", "s3-image.jpg");
    await downloadToFile(s3uri("img/image.jpg"), jpg);
    const img = await imageInfo(jpg);
    expect([img.width, img.height, img.format]).toEqual([200, 100, "jpeg"]);
  });

  it("persists the whole state to an S3 bucket and re-renders from it after the original is deleted", async () => {
    const input = s3uri("state-src/clip.mp4");
    const bucket = s3uri("state/one/");
    await uploadFile(video, input);
    const op = await run("videos", {
      inputUri: input,
      features: ["FACE_DETECTION", "MEDIA_RENDER"],
      outputUri: bucket,
      videoContext: { prepareConfig: { sessionId: "s3-state-one" } },
    });
    expect(op.response.processResults.outputUri).toBe(bucket);
    const names = await listPrefix(bucket);
    expect(names).toEqual(
      expect.arrayContaining(["manifest.json", "detections.json", "hashes.json", "source.mp4", "thumbnails/poster.jpg", "redacted.mp4"]),
    );
    expect(names.filter((n) => n.startsWith("thumbnails/")).length).toBeGreaterThan(1);
    const manifest = JSON.parse((await readBytes(bucket + "manifest.json")).toString("utf8"));
    expect(manifest).toMatchObject({ schema: "obscura.session/v1", sessionId: "s3-state-one", inputUri: input, source: "source.mp4" });
    expect((await probeRemote(bucket + "redacted.mp4", "s3-state-redacted.mp4")).video.codec).toBe("h264");

    // the original is gone: the state bucket alone is enough to render again
    expect(await removePrefix(s3uri("state-src/"))).toBe(1);
    expect(await exists(input)).toBe(false);
    const out = s3uri("rerender/again.mp4");
    const op2 = await run("videos", { inputUri: bucket, features: ["MEDIA_RENDER"], outputUri: out, videoContext: { renderConfig: { videoQuality: 0.3 } } });
    expect(op2.response.processResults.outputUri).toBe(out);
    const info = await probeRemote(out, "s3-rerender.mp4");
    expect(info.video.codec).toBe("h264");
    expect(info.audio?.codec).toBe("aac");
    expect(info.durationSeconds).toBeGreaterThan(1.8);
  });

  it("reads and writes Azure blobs through SAS URLs, with a container-SAS state bucket, and never shows the signatures", async () => {
    const input = await az.blobSasUrl("media", "in/clip one.mp4");
    await uploadFile(video, input);
    const output = await az.blobSasUrl("media", "out/redacted.mp4");
    // A container SAS whose path ends with "/" before the query is a prefix: isPrefixUri looks at the
    // part before "?", and joinUri inserts names there, keeping the SAS query at the end.
    const bucket = await az.containerSasUrl("state", "one/");
    expect(new URL(bucket).pathname.endsWith("/state/one/")).toBe(true);
    const sigs = [...sigValues(input), ...sigValues(output), ...sigValues(bucket)];

    const seen: string[] = [];
    const get = async (name: string) => {
      const g = await s.api("GET", `/api/v1/${name}`);
      seen.push(JSON.stringify(g.body));
      return g.body;
    };

    // a file output
    const r = await s.api("POST", "/api/v1/videos:process", { inputUri: input, features: ["FACE_DETECTION", "MEDIA_RENDER"], outputUri: output });
    expect(r.status).toBe(200);
    await get(r.body.name); // while pending, too
    const op = await s.waitDone(r.body.name, 60_000);
    expect(op.error).toBeUndefined();
    const final = await get(r.body.name);
    expect(final.metadata.progress.inputUri).toMatch(/[?&]sig=REDACTED(&|$)/);
    expect(final.response.processResults.outputUri).toMatch(/[?&]sig=REDACTED(&|$)/);
    expect(final.response.processResults.outputUri.split("?")[0]).toBe(output.split("?")[0]);
    const info = await probeRemote(output, "azure-redacted.mp4");
    expect(info.video.codec).toBe("h264");
    expect(info.audio?.codec).toBe("aac");

    // a state bucket
    const r2 = await s.api("POST", "/api/v1/videos:process", { inputUri: input, features: ["MEDIA_RENDER"], outputUri: bucket });
    expect(r2.status).toBe(200);
    const op2 = await s.waitDone(r2.body.name, 60_000);
    expect(op2.error).toBeUndefined();
    const final2 = await get(r2.body.name);
    expect(final2.response.processResults.outputUri.split("?")[0]).toBe(bucket.split("?")[0]);
    const names = await listPrefix(bucket);
    expect(names).toEqual(expect.arrayContaining(["manifest.json", "detections.json", "hashes.json", "source.mp4", "thumbnails/poster.jpg", "redacted.mp4"]));
    const q = bucket.indexOf("?");
    const blobUri = (name: string) => bucket.slice(0, q) + name + bucket.slice(q);
    expect((await probeRemote(blobUri("redacted.mp4"), "azure-state-redacted.mp4")).video.codec).toBe("h264");
    const manifest = JSON.parse((await readBytes(blobUri("manifest.json"))).toString("utf8"));
    expect(manifest.inputUri).toMatch(/sig=REDACTED/);

    // the container-SAS bucket is read back as an input (listing + per-blob reads with the same SAS)
    const again = await az.blobSasUrl("media", "out/again.mp4");
    sigs.push(...sigValues(again));
    const r4 = await s.api("POST", "/api/v1/videos:process", { inputUri: bucket, features: ["MEDIA_RENDER"], outputUri: again });
    const op4 = await s.waitDone(r4.body.name, 60_000);
    expect(op4.error).toBeUndefined();
    await get(r4.body.name);
    expect((await probeRemote(again, "azure-again.mp4")).video.codec).toBe("h264");

    // a failing Azure read names the blob without its signature either
    const missing = await az.blobSasUrl("media", "in/missing.mp4");
    sigs.push(...sigValues(missing));
    const r3 = await s.api("POST", "/api/v1/videos:process", { inputUri: missing, features: ["MEDIA_RENDER"] });
    const op3 = await s.waitDone(r3.body.name, 60_000);
    expect(op3.error.code).toBe(5);
    expect(op3.error.message).toContain("in/missing.mp4");
    await get(r3.body.name);

    for (const text of [...seen, JSON.stringify(op), JSON.stringify(op2), JSON.stringify(op3), JSON.stringify(manifest)]) {
      for (const sig of sigs) expect(text).not.toContain(sig);
    }
    const logs = s.logs.join("\n");
    for (const sig of sigs) expect(logs).not.toContain(sig);
  });

  it("reads an http input, and an https input with a self-signed certificate only with ignoreCertificateErrors", async () => {
    const plain = await serveFiles({ "/media/clip.mp4": video });
    try {
      const out = path.join(dir, "http-out", "x.mp4");
      const op = await run("videos", { inputUri: `${plain.base}/media/clip.mp4`, features: ["MEDIA_RENDER"], outputUri: fileUri(out) });
      expect(op.metadata.progress.inputUri).toBe(`${plain.base}/media/clip.mp4`);
      expect((await probe(out)).video.codec).toBe("h264");
      expect(plain.requests).toContain("GET /media/clip.mp4");
    } finally {
      await plain.close();
    }

    if (!haveOpenssl) {
      console.warn("openssl CLI not found: the self-signed https input case was skipped");
      return;
    }
    const tlsDir = path.join(dir, "tls");
    await fsp.mkdir(tlsDir, { recursive: true });
    const [keyFile, certFile] = [path.join(tlsDir, "key.pem"), path.join(tlsDir, "cert.pem")];
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-days", "2", "-keyout", keyFile, "-out", certFile], {
      stdio: "ignore",
    });
    const secure = await serveFiles({ "/clip.mp4": video }, { key: await fsp.readFile(keyFile), cert: await fsp.readFile(certFile) });
    try {
      const url = `${secure.base}/clip.mp4`;
      const refused = await run("videos", { inputUri: url, features: ["MEDIA_RENDER"], outputUri: fileUri(path.join(dir, "tls-refused.mp4")) }, true);
      expect(refused.error.code).toBe(14); // UNAVAILABLE
      expect(refused.error.message).toContain("ignoreCertificateErrors");
      expect(fs.existsSync(path.join(dir, "tls-refused.mp4"))).toBe(false);

      const out = path.join(dir, "tls-ok.mp4");
      const ok = await run("videos", {
        inputUri: url,
        features: ["MEDIA_RENDER"],
        outputUri: fileUri(out),
        videoContext: { prepareConfig: { ignoreCertificateErrors: true } },
      });
      expect(ok.response.processResults.outputUri).toBe(fileUri(out));
      expect((await probe(out)).video.codec).toBe("h264");
    } finally {
      await secure.close();
    }
  });

  it("maps file:///C:/ URIs under OBSCURA_WINDOWS_DRIVE_ROOT", async () => {
    await fsp.mkdir(path.join(winRoot, "c", "videos"), { recursive: true });
    await fsp.copyFile(video, path.join(winRoot, "c", "videos", "clip.mp4"));
    const op = await run("videos", { inputUri: "file:///C:/videos/clip.mp4", features: ["MEDIA_RENDER"], outputUri: "file:///C:/out/x.mp4" });
    expect(op.metadata.progress.inputUri).toBe("file:///C:/videos/clip.mp4");
    expect(op.response.processResults.outputUri).toBe("file:///C:/out/x.mp4");
    const written = path.join(winRoot, "c", "out", "x.mp4");
    expect(fs.existsSync(written)).toBe(true);
    expect((await probe(written)).video.codec).toBe("h264");
  });

  it("fails with NOT_FOUND (5) for a missing S3 key and an http 404, naming what is missing", async () => {
    const missingKey = s3uri("nowhere/missing-clip.mp4");
    const op = await run("videos", { inputUri: missingKey, features: ["MEDIA_RENDER"] }, true);
    expect(op.error.code).toBe(5);
    expect(op.error.message).toContain("nowhere/missing-clip.mp4");
    expect(op.response).toBeUndefined();

    const srv = await serveFiles({});
    try {
      const url = `${srv.base}/gone/clip.mp4`;
      const op2 = await run("videos", { inputUri: url, features: ["MEDIA_RENDER"] }, true);
      expect(op2.error.code).toBe(5);
      expect(op2.error.message).toContain("/gone/clip.mp4");
      expect(op2.error.message).toMatch(/404/);
    } finally {
      await srv.close();
    }
  });
});
