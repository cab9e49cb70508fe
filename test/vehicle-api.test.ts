/**
 * The vehicle and plate annotation API over real HTTP against the real server (issue 8):
 * readiness (503 then ready, the log line), X-API-Key, /v11/images:annotate with content and URLs,
 * per-item errors, $ref pointers, the v2 hosted and container forms, the keyless compatibility
 * listeners, the parameters file and the address rules for image URLs. Cars and plates are drawn
 * in the test (test/helpers/cars.ts) and read by the real models.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { carJpeg, carPng } from "./helpers/cars";
import { startServer, tempDir, TOKEN, type TestServer } from "./helpers/server";
import { freePort } from "./helpers/storage-servers";

let images: http.Server;
let imagesUrl = "";
const files = new Map<string, { type: string; body: Buffer }>();

beforeAll(async () => {
  files.set("/white.jpg", { type: "image/jpeg", body: await carJpeg("#f4f4f4", "8TRX552") });
  files.set("/red.png", { type: "image/png", body: await carPng("#c0392b", "4KPM219") });
  files.set("/car.gif", { type: "image/gif", body: await sharp(await carPng("#c0392b", "4KPM219")).gif().toBuffer() });
  images = http.createServer((req, res) => {
    const f = files.get(req.url ?? "");
    if (!f) return void res.writeHead(404).end("not found");
    res.writeHead(200, { "content-type": f.type, "content-length": f.body.length }).end(f.body);
  });
  await new Promise<void>((r) => images.listen(0, "127.0.0.1", r));
  imagesUrl = `http://127.0.0.1:${(images.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((r) => images?.close(r));
});

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: json, headers: res.headers };
}

/** Resolves a JSON pointer "#/a/0/b" in `doc`. */
function resolvePointer(doc: unknown, ref: string): unknown {
  expect(ref.startsWith("#/")).toBe(true);
  return ref
    .slice(2)
    .split("/")
    .reduce<any>((o, k) => (o == null ? undefined : o[k.replace(/~1/g, "/").replace(/~0/g, "~")]), doc);
}

const KEY = { "x-api-key": TOKEN };
const b64 = (b: Buffer) => b.toString("base64");
const BOTH = [{ type: "VEHICLE_DETECTION" }, { type: "LICENSE_PLATE_DETECTION" }];

describe("vehicle annotation API on the main port", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}); // warm-up on the first vehicle request (the helper's default)
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("answers 503 with Retry-After while starting, then passes its health test and serves", async () => {
    const first = await post(`${server.url}/v11/images:annotate`, { requests: [{ image: { content: "x" }, features: BOTH }] }, KEY);
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).toBe("5");
    expect(first.body.error.message).toMatch(/starting: models are loading and the initial health test is running/);
    await server.waitFor(/initial health test passed, server ready/, 180_000);
    const health = await fetch(`${server.url}/v11/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ state: "ready", ready: true, error: null, healthTest: { vehicles: 1, plates: ["7XYZ482"] } });
  }, 240_000);

  it("needs X-API-Key: missing or wrong keys get 401 with a clear body", async () => {
    const body = { requests: [{ image: { content: b64(files.get("/red.png")!.body) }, features: BOTH }] };
    const missing = await post(`${server.url}/v11/images:annotate`, body);
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatchObject({ code: 401, status: "UNAUTHENTICATED", message: "missing X-API-Key header" });
    const wrong = await post(`${server.url}/v2/vehicle/us`, { urlList: [`${imagesUrl}/red.png`] }, { "x-api-key": "nope" });
    expect(wrong.status).toBe(401);
    // claiming to come through a compatibility listener does not help on the main port
    const spoof = await post(`${server.url}/v11/images:annotate`, body, { "x-obscura-listener": "gateway", "x-obscura-listener-secret": "guess" });
    expect(spoof.status).toBe(401);
    expect(JSON.stringify(server.logs)).not.toContain(TOKEN);
  });

  it("annotates content and URLs; each failing item gets its own error while the others succeed", async () => {
    const r = await post(
      `${server.url}/v11/images:annotate`,
      {
        requests: [
          { image: { content: b64(files.get("/red.png")!.body) }, features: BOTH },
          { image: { source: { imageUri: `${imagesUrl}/white.jpg` } }, features: BOTH },
          { image: { source: { imageUri: `${imagesUrl}/car.gif` } }, features: BOTH },
          { image: { source: { imageUri: `${imagesUrl}/missing.jpg` } }, features: BOTH },
          { image: { content: "@@not base64@@" }, features: BOTH },
          { image: { content: b64(files.get("/red.png")!.body) }, features: [{ type: "FACE_DETECTION" }] },
          { image: { source: { imageUri: "http://169.254.169.254/latest/meta-data/car.jpg" } }, features: BOTH },
          { image: { source: { imageUri: `http://127.0.0.1:${await freePort()}/gone.jpg` } }, features: BOTH },
          { image: { source: { imageUri: `${imagesUrl}/red.png` } }, features: [{ type: "LICENSE_PLATE_DETECTION" }] },
        ],
      },
      KEY,
    );
    expect(r.status).toBe(200);
    const res = r.body.responses;
    expect(res).toHaveLength(9);
    // 0: the red car by content
    const red = res[0];
    expect(red.error).toBeUndefined();
    expect(red.licenseplateAnnotations).toHaveLength(1);
    expect(red.licenseplateAnnotations[0]).toMatchObject({ string: { value: "4KPM219" }, region: { value: "US-CA" }, locale: "us", mid: "/m/01jfm_", description: "Vehicle registration plate" });
    expect(red.licenseplateAnnotations[0].boundingPoly.vertices).toHaveLength(4);
    expect(red.licenseplateAnnotations[0].boundingPoly.normalizedVertices).toHaveLength(4);
    for (const [i, v] of red.licenseplateAnnotations[0].boundingPoly.vertices.entries()) {
      const n = red.licenseplateAnnotations[0].boundingPoly.normalizedVertices[i];
      expect(Math.abs(n.x * 800 - v.x)).toBeLessThanOrEqual(1);
      expect(Math.abs(n.y * 500 - v.y)).toBeLessThanOrEqual(1);
    }
    expect(red.vehicleAnnotations).toHaveLength(1);
    expect(red.vehicleAnnotations[0]).toMatchObject({ color: { value: "red" }, make: { value: "", score: 0 }, model: { value: "", score: 0 }, generation: { value: null, score: 0 }, mid: "/m/0k4j", description: "car" });
    expect(resolvePointer(r.body, red.vehicleAnnotations[0].licenseplate.$ref)).toEqual(red.licenseplateAnnotations[0]);
    expect(red.vehicleAnnotations[0].licenseplate.$ref).toBe("#/responses/0/licenseplateAnnotations/0");
    // 1: the white car by URL (JPG)
    expect(res[1].licenseplateAnnotations.map((p: any) => p.string.value)).toEqual(["8TRX552"]);
    expect(res[1].vehicleAnnotations[0].color.value).toBe("white");
    expect(resolvePointer(r.body, res[1].vehicleAnnotations[0].licenseplate.$ref)).toMatchObject({ string: { value: "8TRX552" } });
    // 2-7: errors of their own
    expect(res[2]).toMatchObject({ licenseplateAnnotations: [], vehicleAnnotations: [], error: { code: 3, message: expect.stringMatching(/requests\[2\]\.image: the image is gif; only JPG and PNG are supported/) } });
    expect(res[3].error).toMatchObject({ code: 5, message: expect.stringMatching(/missing\.jpg answered HTTP 404/) });
    expect(res[4].error).toMatchObject({ code: 3, message: expect.stringMatching(/requests\[4\]\.image\.content is not base64/) });
    expect(res[5].error).toMatchObject({ code: 3, message: expect.stringMatching(/requests\[5\]\.features\[0\]\.type must be one of VEHICLE_DETECTION, LICENSE_PLATE_DETECTION/) });
    expect(res[6].error).toMatchObject({ code: 7, message: expect.stringMatching(/169\.254\.169\.254.*link-local address that inputs may not reach/) });
    expect(res[7].error).toMatchObject({ code: 14, message: expect.stringMatching(/ECONNREFUSED/) });
    // 8: plates only: no vehicles, and nothing points anywhere
    expect(res[8].vehicleAnnotations).toEqual([]);
    expect(res[8].licenseplateAnnotations.map((p: any) => p.string.value)).toEqual(["4KPM219"]);
  }, 120_000);

  it("refuses malformed requests as a whole with 400 (415 for another content type, 405 for GET)", async () => {
    const u = `${server.url}/v11/images:annotate`;
    expect((await post(u, "{not json", KEY)).status).toBe(400);
    const noRequests = await post(u, { request: [] }, KEY);
    expect(noRequests.status).toBe(400);
    expect(noRequests.body.error.message).toMatch(/requests is required/);
    const tooMany = await post(u, { requests: Array.from({ length: 17 }, () => ({ image: { content: "x" }, features: BOTH })) }, KEY);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/requests holds 17 items; at most 16/);
    expect((await post(u, "requests", { ...KEY, "content-type": "text/plain" })).status).toBe(415);
    expect((await fetch(u, { headers: KEY })).status).toBe(405);
  });

  it("v2: /v2/vehicle/us, /eu and /v2/vehicle answer the hosted form; urlList must hold exactly one URL", async () => {
    const t0 = Date.now();
    const us = await post(`${server.url}/v2/vehicle/us`, { urlList: [`${imagesUrl}/red.png`] }, KEY);
    expect(us.status).toBe(200);
    const b = us.body;
    expect(b).toMatchObject({ apiVersion: { major: 1, minor: 1 }, frameDimensions: { w: 800, h: 500 }, frameSource: `${imagesUrl}/red.png`, sourceId: "lpr-1", frameId: "0", links: [], engine_version: expect.any(String), request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(b.analyticsTimestamp).toBeGreaterThanOrEqual(t0);
    expect(b.frameTimestamp).toBeGreaterThanOrEqual(t0);
    expect(b.time_analytics_complete).toBeGreaterThanOrEqual(b.time_analytics_start);
    const plates = Object.entries<any>(b.metaClasses.licensePlates);
    const vehicles = Object.entries<any>(b.metaClasses.vehicles);
    expect(plates).toHaveLength(1);
    expect(vehicles).toHaveLength(1);
    const [lpId, lp] = plates[0]!;
    const [vId, v] = vehicles[0]!;
    expect(lp).toMatchObject({ class: "licensePlate", updated: true, links: [{ metaClass: "vehicles", id: vId }], attributes: { lpString: { value: "4KPM219", updated: true }, lpRegion: { value: "US-CA", updated: true } } });
    for (const k of ["attributeScore", "detectionScore"]) expect(typeof lp.attributes.lpString[k]).toBe("number");
    expect(Object.keys(lp.box).sort()).toEqual(["height", "width", "x", "y"]);
    expect(lp.firstFrameTimestamp).toBe(b.frameTimestamp);
    expect(lp.bestDetectionTimestamp).toBe(b.frameTimestamp);
    expect(v).toMatchObject({ class: "car", links: [{ metaClass: "licensePlates", id: lpId }], attributes: { vehicleType: { value: { make: "", model: "", generation: "", type: "car" } }, color: { value: "red" } } });
    const eu = await post(`${server.url}/v2/vehicle/eu`, { urlList: [`${imagesUrl}/red.png`] }, KEY);
    expect(eu.status).toBe(200);
    const euRegion = Object.values<any>(eu.body.metaClasses.licensePlates)[0].attributes.lpRegion.value;
    expect(euRegion).not.toMatch(/^US/); // forced into the European group
    const both = await post(`${server.url}/v2/vehicle`, { urlList: [`${imagesUrl}/white.jpg`] }, KEY);
    expect(Object.values<any>(both.body.metaClasses.licensePlates)[0].attributes.lpString.value).toBe("8TRX552");
    const two = await post(`${server.url}/v2/vehicle/us`, { urlList: [`${imagesUrl}/red.png`, `${imagesUrl}/white.jpg`] }, KEY);
    expect(two.status).toBe(400);
    expect(two.body.error.message).toMatch(/urlList must hold exactly one URL, got 2/);
    const gif = await post(`${server.url}/v2/vehicle/us`, { urlList: [`${imagesUrl}/car.gif`] }, KEY);
    expect(gif.status).toBe(400);
    expect(gif.body.error.message).toMatch(/urlList\[0\]: the image is gif; only JPG and PNG/);
    expect((await post(`${server.url}/v2/vehicle/fr`, { urlList: [`${imagesUrl}/red.png`] }, KEY)).status).toBe(404);
  }, 120_000);
});

describe("compatibility listeners, the parameters file and readiness at start", () => {
  let server: TestServer;
  let gateway = "";
  let legacy = "";
  beforeAll(async () => {
    const dir = tempDir("vehicle-config");
    const cfg = path.join(dir, "vehicle.json");
    fs.writeFileSync(cfg, JSON.stringify({ sourceId: "gate-7", colorDummyValue: "pink", useTracker: false, lptFilter: "us" }));
    const [g, l] = [await freePort(), await freePort()];
    server = await startServer({ OBSCURA_VEHICLE_WARMUP: "boot", OBSCURA_GATEWAY_PORT: String(g), OBSCURA_LEGACY_PORT: String(l), OBSCURA_VEHICLE_CONFIG: cfg });
    gateway = `http://127.0.0.1:${g}`;
    legacy = `http://127.0.0.1:${l}`;
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("runs the health test at start without any request, and logs the parameters it does not use", async () => {
    await server.waitFor(/initial health test passed, server ready/, 180_000);
    expect(server.logs.join("\n")).toMatch(/vehicle parameters not used by image annotation.*useTracker/);
  }, 200_000);

  it("the gateway port serves /v11 without a key, and nothing else", async () => {
    const r = await post(`${gateway}/v11/images:annotate`, { requests: [{ image: { content: b64(files.get("/red.png")!.body) }, features: BOTH }] });
    expect(r.status).toBe(200);
    expect(r.body.responses[0].licenseplateAnnotations[0].string.value).toBe("4KPM219");
    expect(r.body.responses[0].vehicleAnnotations[0].color).toEqual({ value: "pink", score: 1 }); // colorDummyValue
    expect((await fetch(`${gateway}/v11/health`)).status).toBe(200);
    expect((await post(`${gateway}/v2/vehicle/us`, { urlList: [`${imagesUrl}/red.png`] })).status).toBe(404);
    expect((await fetch(`${gateway}/api/v1/operations`)).status).toBe(404);
  }, 60_000);

  it("the legacy port serves /vehicle/us and /vehicle/eu in the container form without a key", async () => {
    const r = await post(`${legacy}/vehicle/us`, { urlList: [`${imagesUrl}/red.png`] });
    expect(r.status).toBe(200);
    expect(r.body).not.toHaveProperty("frameTimestamp");
    expect(r.body.sourceId).toBe("gate-7");
    const v = Object.values<any>(r.body.metaClasses.vehicles)[0];
    expect(v.attributes.vehicleType.value).toBe(""); // make/model unknown in the default build: an empty string, never invented
    expect(Object.values<any>(r.body.metaClasses.licensePlates)[0].attributes.lpString.value).toBe("4KPM219");
    expect((await post(`${legacy}/v11/images:annotate`, { requests: [] })).status).toBe(404);
    // the same path on the main port needs the key
    expect((await post(`${server.url}/vehicle/us`, { urlList: [`${imagesUrl}/red.png`] })).status).toBe(401);
  }, 60_000);

  it("a bad parameters file stops the start with the reason", async () => {
    const dir = tempDir("vehicle-bad");
    const cfg = path.join(dir, "vehicle.json");
    fs.writeFileSync(cfg, JSON.stringify({ lptStringScoring: "median" }));
    await expect(startServer({ OBSCURA_VEHICLE_CONFIG: cfg })).rejects.toThrow(/vehicle annotation configuration refused.*lptStringScoring: must be min, max or average \(got .*median/);
  }, 120_000);
});
