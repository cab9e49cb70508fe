/**
 * POST /v1/detections over real HTTP against the real server on PostgreSQL (issue 9): both body
 * forms, each face option alone and together, landmark names and counts, EXIF-rotated input,
 * access tokens with their quota, and the error table (400, 401, 403, 405, 406, 413, 415, 502).
 * The photos are face-api's demo samples (they ship in the npm package).
 */
import http from "node:http";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToken, revokeToken } from "@/server/identity/tokens";
import { switchDatabase } from "./helpers/database";
import { startServer, tempPostgres, TOKEN, type TestServer } from "./helpers/server";

const SAMPLE = (n: number) => path.resolve(`node_modules/@vladmandic/face-api/demo/sample${n}.jpg`);
const actor = { username: "root", ip: "127.0.0.1" };

let server: TestServer;
let pg: { url: string; drop(): Promise<void> };
let restore: () => Promise<void>;
let images: http.Server;
let imagesUrl = "";
const tokens: Record<string, string> = {};
let sample3: Buffer;

beforeAll(async () => {
  pg = await tempPostgres();
  server = await startServer({ DATABASE_URL: pg.url, OBSCURA_DETECT_QUEUE: "1" });
  restore = await switchDatabase("detection-api", { databaseUrl: pg.url });
  tokens.full = (await createToken({ name: "detector", kind: "access" }, actor)).token;
  tokens.limited = (await createToken({ name: "trial", kind: "access", monthlyQuota: 2 }, actor)).token;
  const revoked = await createToken({ name: "old", kind: "access" }, actor);
  await revokeToken(revoked.info.id, actor);
  tokens.revoked = revoked.token;
  tokens.apikey = (await createToken({ name: "plates", kind: "apikey" }, actor)).token;
  sample3 = await sharp(SAMPLE(3)).toBuffer();
  images = http.createServer((req, res) => {
    // /private.jpg needs Basic auth user:secret
    if (req.url === "/private.jpg" && req.headers.authorization !== "Basic " + Buffer.from("user:s3cret").toString("base64")) return void res.writeHead(401).end("who are you");
    if (req.url === "/sample3.jpg" || req.url === "/private.jpg") return void res.writeHead(200, { "content-type": "image/jpeg" }).end(sample3);
    res.writeHead(404).end("no");
  });
  await new Promise<void>((r) => images.listen(0, "127.0.0.1", r));
  imagesUrl = `http://127.0.0.1:${(images.address() as { port: number }).port}`;
}, 300_000);

afterAll(async () => {
  await new Promise((r) => images?.close(r));
  await server?.stop();
  await restore?.();
  await pg?.drop();
});

async function detect(query: string, body: Buffer | string | object, opts: { token?: string | null; type?: string; method?: string; path?: string } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token !== null) headers["x-access-token"] = opts.token ?? tokens.full!;
  const isJson = !(body instanceof Buffer);
  headers["content-type"] = opts.type ?? (isJson ? "application/json" : "application/octet-stream");
  const res = await fetch(`${server.url}${opts.path ?? "/v1/detections"}${query}`, {
    method: opts.method ?? "POST",
    headers,
    body: opts.method === "GET" ? undefined : isJson ? (typeof body === "string" ? body : JSON.stringify(body)) : new Uint8Array(body as Buffer),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

const faces = (b: any) => b.objects.filter((o: any) => o.type === "face");

describe("POST /v1/detections", () => {
  it("finds people and faces in raw bytes; boxes only without faceOption", async () => {
    const r = await detect("", sample3);
    expect(r.status).toBe(200);
    expect(r.body.image).toEqual({ width: 1536, height: 1080, orientation: 1 }); // 1920x1350 scaled into 1920x1080
    expect(faces(r.body)).toHaveLength(3);
    expect(r.body.objects.filter((o: any) => o.type === "person").length).toBeGreaterThanOrEqual(3);
    for (const o of r.body.objects) {
      expect(Object.keys(o).sort()).toEqual(["boundingBox", "type"]);
      expect(Object.keys(o.boundingBox).sort()).toEqual(["height", "width", "x", "y"]);
      expect(o.boundingBox.x + o.boundingBox.width).toBeLessThanOrEqual(1536);
    }
    const onlyFaces = await detect("?type=face", sample3);
    expect(onlyFaces.body.objects.every((o: any) => o.type === "face")).toBe(true);
    const onlyPeople = await detect("?type=person", sample3);
    expect(onlyPeople.body.objects.every((o: any) => o.type === "person")).toBe(true);
  }, 120_000);

  it("gives exactly the attributes asked for, alone and together", async () => {
    const fields: Record<string, string[]> = {
      gender: ["gender", "genderConfidence"],
      age: ["age", "ageConfidence"],
      emotion: ["emotion", "emotionConfidence", "emotionsAll"],
      pose: ["frontal", "pose"],
      landmark: ["landmarks"],
    };
    const body = { image: sample3.toString("base64") };
    for (const [option, keys] of Object.entries(fields)) {
      const r = await detect(`?type=face&faceOption=${option}`, body);
      expect(r.status, option).toBe(200);
      for (const f of faces(r.body)) expect(Object.keys(f.attributes).sort(), option).toEqual(keys);
    }
    const all = await detect("?type=face&faceOption=gender,landmark,emotion,pose,age", { image: `data:image/jpeg;base64,${body.image}` });
    const f = faces(all.body)[0];
    expect(Object.keys(f.attributes).sort()).toEqual(Object.values(fields).flat().sort());
    expect(["male", "female"]).toContain(f.attributes.gender);
    expect(Number.isInteger(f.attributes.age)).toBe(true);
    expect(Object.keys(f.attributes.emotionsAll).sort()).toEqual(["anger", "disgust", "fear", "happiness", "neutral", "sadness", "surprise"]);
    expect(Object.keys(f.attributes.pose).sort()).toEqual(["pitch", "roll", "yaw"]);
    const lm = f.attributes.landmarks;
    expect(Object.fromEntries(Object.entries(lm).map(([k, v]) => [k, (v as unknown[]).length]))).toEqual({
      faceContour: 17, eyebrowRight: 5, eyebrowLeft: 5, noseBridge: 4, noseBall: 5, eyeRight: 6, eyeLeft: 6, mouthOuter: 12, mouthInner: 8, eyeRightCenter: 1, eyeLeftCenter: 1,
    }); // prettier-ignore
    expect(Object.values(lm).flat().length).toBe(70); // 68 + the two eye centres
    for (const p of Object.values(lm).flat() as number[][]) expect(p).toHaveLength(2);
  }, 180_000);

  it("reads image URLs, with credentials in the URL", async () => {
    const r = await detect("?type=face", { image: `${imagesUrl}/sample3.jpg` });
    expect(r.status).toBe(200);
    expect(faces(r.body)).toHaveLength(3);
    const priv = await detect("?type=face", { image: `http://user:s3cret@${imagesUrl.slice(7)}/private.jpg` });
    expect(priv.status).toBe(200);
    const denied = await detect("?type=face", { image: `http://user:wrong@${imagesUrl.slice(7)}/private.jpg` });
    expect(denied.status).toBe(400);
    expect(denied.body).toMatchObject({ error: "Bad Request", reasonCode: 40006, details: { statusCode: 401 } });
    expect(JSON.stringify(denied.body)).not.toContain("wrong"); // the password is not echoed
    expect(server.logs.join("\n")).not.toContain("s3cret");
  }, 120_000);

  it("applies the EXIF orientation: a rotated JPEG gives the upright image's boxes", async () => {
    const stored = await sharp(sample3).rotate(-90).withMetadata({ orientation: 6 }).jpeg({ quality: 92 }).toBuffer();
    const upright = await detect("?type=face", sample3);
    const rotated = await detect("?type=face", stored);
    expect(rotated.status).toBe(200);
    expect(rotated.body.image).toEqual({ width: 1536, height: 1080, orientation: 6 });
    const key = (o: any) => o.boundingBox.x;
    const a = faces(upright.body).sort((p: any, q: any) => key(p) - key(q));
    const b = faces(rotated.body).sort((p: any, q: any) => key(p) - key(q));
    expect(b).toHaveLength(a.length);
    for (let i = 0; i < a.length; i++) {
      expect(Math.abs(a[i].boundingBox.x - b[i].boundingBox.x)).toBeLessThan(15);
      expect(Math.abs(a[i].boundingBox.y - b[i].boundingBox.y)).toBeLessThan(15);
    }
  }, 120_000);

  it("answers the error table with {error, reason, reasonCode}", async () => {
    const check = (r: { status: number; body: any }, status: number, reasonCode: number, reason: RegExp) => {
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body).toMatchObject({ error: expect.any(String), reasonCode, reason: expect.stringMatching(reason) });
    };
    const small = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#888" } }).png().toBuffer();
    check(await detect("?type=car", small), 400, 40001, /invalid type value "car"; allowed: all, face, person/);
    check(await detect("?faceOption=gender,smile", small), 400, 40002, /invalid faceOption value "smile"/);
    check(await detect("", "{not json"), 400, 40003, /not valid JSON/);
    check(await detect("", { picture: "x" }), 400, 40004, /"image"/);
    check(await detect("", { image: "%%%" }), 400, 40005, /neither an http\(s\) URL nor base64/);
    check(await detect("", small, { token: null }), 401, 40101, /missing X-Access-Token/);
    check(await detect("", small, { token: "obs_a_nope" }), 401, 40102, /unknown token/);
    check(await detect("", small, { token: tokens.revoked }), 401, 40103, /revoked/);
    check(await detect("", small, { token: tokens.apikey }), 401, 40104, /this is an apikey token/);
    check(await detect("", small, { method: "GET" }), 405, 40501, /only POST/);
    check(await detect("", small, { path: "/v1/detection" }), 406, 40601, /invalid request path \/v1\/detection/);
    check(await detect("", "image", { type: "text/plain" }), 415, 41501, /Content-Type must be application\/json .* or application\/octet-stream/);
    check(await detect("", await sharp(small).webp().toBuffer()), 415, 41502, /webp; supported formats are JPEG, GIF and PNG/);
    check(await detect("", Buffer.alloc(10 * 1024 * 1024 + 1, 7)), 413, 41301, /larger than the limit of 10485760 bytes/);
    // GIF is accepted
    expect((await detect("?type=person", await sharp(small).gif().toBuffer())).status).toBe(200);
  }, 120_000);

  it("counts calls against the token's monthly quota: 403 past it", async () => {
    const small = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#888" } }).png().toBuffer();
    expect((await detect("?type=face", small, { token: tokens.limited })).status).toBe(200);
    expect((await detect("?type=face", small, { token: tokens.limited })).status).toBe(200);
    const over = await detect("?type=face", small, { token: tokens.limited });
    expect(over.status).toBe(403);
    expect(over.body).toMatchObject({ error: "Forbidden", reasonCode: 40301, reason: expect.stringMatching(/monthly quota of 2 calls used up/) });
  });

  it("answers 502 when more requests wait than the queue holds, and stays responsive meanwhile", async () => {
    // OBSCURA_DETECT_QUEUE=1 on this server: one runs, one waits, the others are turned away
    const all = await Promise.all(Array.from({ length: 4 }, () => detect("?faceOption=gender,age,emotion,pose,landmark", sample3)));
    const statuses = all.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    const busy = all.filter((r) => r.status === 502);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    expect(busy[0]!.body).toMatchObject({ error: "Bad Gateway", reasonCode: 50201, reason: expect.stringMatching(/busy/) });
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
  }, 180_000);
});
