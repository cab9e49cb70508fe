/**
 * The sensor Data API (issue 10, first part): the ten endpoints over real HTTP against the real
 * server on PostgreSQL, on events and media stored the way the pipeline stores them; and the
 * aggregations on the embedded PGlite too (date_bin, generate_series, percentile_cont in both).
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertEvents, insertMedia, type SensorEventInput } from "@/server/analytics/events";
import { deviceAggregate } from "@/server/data-api/query";
import { switchDatabase } from "./helpers/database";
import { fileUri, startServer, tempDir, tempPostgres, TOKEN, type TestServer } from "./helpers/server";

const T = (hm: string) => new Date(`2026-11-23T${hm}:00Z`);
const base = { workspaceId: "ws1", deviceId: "cam-1", streamId: "s-1", objectType: "car" };
const EVENTS: SensorEventInput[] = [
  ...(
    [
      ["10:05", "NORTH"],
      ["10:20", "NORTH"],
      ["10:40", "SOUTH"],
      ["11:10", "NORTH"],
      ["12:30", "SOUTH"],
    ] as const
  ).map(([t, direction], i) => ({ ...base, id: `gate-${i}`, sensorId: "sensor-gate", sensorName: "gate", sensorType: "COUNT" as const, direction, value: 1, uniqueId: 100 + i, timeCollected: T(t), track: [[i, i]], frameImage: `https://x/frame-${i}.jpg` })),
  ...(
    [
      ["10:10", 10],
      ["10:15", 20],
      ["10:50", 30],
      ["11:30", 40],
    ] as const
  ).map(([t, v], i) => ({ ...base, id: `speed-${i}`, sensorId: "sensor-speed", sensorName: "speed", sensorType: "SPEED" as const, direction: "NORTH" as const, value: v, timeCollected: T(t), data: { speed: v } })),
  { ...base, id: "door-1", sensorId: "sensor-door", sensorName: "door", sensorType: "PRESENCE", value: 0, timeCollected: T("10:30"), objectType: "person", data: { active: true, numObjectsInRegion: 1, object: { enteredOn: T("10:30").getTime(), objectType: "person", uniqueId: 7 }, startOn: T("10:30").getTime() } },
  { ...base, id: "other-device", deviceId: "cam-2", streamId: "s-2", sensorId: "sensor-gate", sensorName: "gate", sensorType: "COUNT", direction: "NORTH", value: 1, timeCollected: T("10:07") },
];

describe("Data API over HTTP (PostgreSQL)", () => {
  let server: TestServer;
  let pg: { url: string; drop(): Promise<void> };
  let restore: () => Promise<void>;
  let jpeg: Buffer;

  beforeAll(async () => {
    pg = await tempPostgres();
    server = await startServer({ DATABASE_URL: pg.url });
    restore = await switchDatabase("data-api", { databaseUrl: pg.url });
    await insertEvents(EVENTS);
    const dir = tempDir("media");
    jpeg = await sharp({ create: { width: 32, height: 24, channels: 3, background: "#c33" } }).jpeg().toBuffer();
    fs.writeFileSync(path.join(dir, "frame.jpg"), jpeg);
    fs.writeFileSync(path.join(dir, "clip.mp4"), Buffer.from("not really a clip"));
    await insertMedia([
      { id: "m-img-1", workspaceId: "ws1", streamId: "s-1", deviceId: "cam-1", timeCollected: T("10:05"), mediaType: "IMAGE", uri: fileUri(path.join(dir, "frame.jpg")), contentType: "image/jpeg", startTime: T("10:05"), events: [{ eventId: "gate-0" }] },
      { id: "m-vid-1", workspaceId: "ws1", streamId: "s-1", deviceId: "cam-1", timeCollected: T("10:00"), mediaType: "VIDEO", uri: fileUri(path.join(dir, "clip.mp4")), contentType: "video/mp4", startTime: T("10:00"), durationMs: 5000 },
    ]);
  }, 300_000);

  afterAll(async () => {
    await server?.stop();
    await restore?.();
    await pg?.drop();
  });

  const call = async (method: string, p: string, body?: unknown, key: string | null = TOKEN) => {
    const res = await fetch(server.url + p, { method, headers: { ...(key ? { "x-api-key": key } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const type = res.headers.get("content-type") ?? "";
    return { status: res.status, headers: res.headers, body: type.includes("json") ? await res.json() : Buffer.from(await res.arrayBuffer()) };
  };

  it("aggregates by window with every function, in SQL; offsets in any of the spec's forms", async () => {
    const r = await call("POST", `/data/query?startTime=${encodeURIComponent("2026-11-23T12:00:00+02:00")}&endTime=${encodeURIComponent("2026-11-23T08:00:00-0500")}`, {
      deviceId: "cam-1",
      sensors: ["speed"],
      interval: "1 hour",
      functions: ["COUNT", "SUM", "AVERAGE", "MIN", "MAX", "MEDIAN", "QUARTILE_1", "QUARTILE_2", "QUARTILE_3"],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual([
      {
        deviceId: "cam-1",
        sensorName: "speed",
        direction: "NORTH",
        windowStart: "2026-11-23T10:00:00.000Z",
        windowEnd: "2026-11-23T11:00:00.000Z",
        values: [
          { function: "COUNT", value: 3 },
          { function: "SUM", value: 60 },
          { function: "AVERAGE", value: 20 },
          { function: "MIN", value: 10 },
          { function: "MAX", value: 30 },
          { function: "MEDIAN", value: 20 },
          { function: "QUARTILE_1", value: 15 },
          { function: "QUARTILE_2", value: 20 },
          { function: "QUARTILE_3", value: 25 },
        ],
      },
      expect.objectContaining({ windowStart: "2026-11-23T11:00:00.000Z", values: expect.arrayContaining([{ function: "COUNT", value: 1 }, { function: "MEDIAN", value: 40 }]) }),
    ]);
  });

  it("fills empty windows per sensor and direction, orders descending, and counts only the device asked", async () => {
    const r = await call("POST", "/data/query?startTime=2026-11-23T10:00:00Z&endTime=2026-11-23T13:00:00Z", { deviceId: "cam-1", sensors: ["gate"], interval: "60 minutes", functions: ["COUNT"], fillEmptyWindows: true, order: "DESCENDING" });
    expect(r.status).toBe(200);
    const rows = r.body.map((w: any) => `${w.windowStart.slice(11, 16)} ${w.direction} ${w.values[0].value}`);
    expect(rows).toEqual(["12:00 NORTH 0", "12:00 SOUTH 1", "11:00 NORTH 1", "11:00 SOUTH 0", "10:00 NORTH 2", "10:00 SOUTH 1"]);
  });

  it("refuses bad queries with 400 naming the field", async () => {
    const q = (s: string, body: unknown) => call("POST", `/data/query${s}`, body);
    const ok = { deviceId: "cam-1", sensors: ["gate"], interval: "1 hour" };
    const a = await q("?endTime=2026-11-23T13:00:00Z", ok);
    expect([a.status, a.body.error.message]).toEqual([400, "startTime is a required query parameter (an ISO 8601 timestamp)"]);
    const b = await q("?startTime=2026-11-23T10:00:00Z&endTime=yesterday", ok);
    expect(b.body.error.message).toMatch(/endTime "yesterday" is not an ISO 8601 timestamp/);
    const c = await q("?startTime=2026-11-23T10:00:00Z&endTime=2026-11-23T13:00:00Z", { ...ok, interval: "1 fortnight", functions: ["MODE"] });
    expect(c.status).toBe(400);
    expect(c.body.error.message).toMatch(/interval "1 fortnight" must be a count and a unit/);
    expect(c.body.error.message).toMatch(/functions\.0: must be one of COUNT, SUM/);
    const d = await q("?startTime=2026-11-23T13:00:00Z&endTime=2026-11-23T10:00:00Z", ok);
    expect(d.body.error.message).toMatch(/endTime .* must be after startTime/);
    expect((await call("POST", "/data/query?startTime=2026-11-23T10:00:00Z&endTime=2026-11-23T13:00:00Z", ok, null)).status).toBe(401);
  });

  it("stream aggregates: a missing startTime gives one window of the interval ending at endTime", async () => {
    const r = await call("POST", "/data/stream/aggregate/query", { streamId: "s-1", sensors: ["sensor-gate"], endTime: "2026-11-23T11:30:00Z", interval: "1 hour", functions: ["COUNT", "SUM"] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual([
      { streamId: "s-1", sensorId: "sensor-gate", direction: "NORTH", windowStart: "2026-11-23T10:30:00.000Z", windowEnd: "2026-11-23T11:30:00.000Z", values: [{ function: "COUNT", value: 1 }, { function: "SUM", value: 1 }] },
      { streamId: "s-1", sensorId: "sensor-gate", direction: "SOUTH", windowStart: "2026-11-23T10:30:00.000Z", windowEnd: "2026-11-23T11:30:00.000Z", values: [{ function: "COUNT", value: 1 }, { function: "SUM", value: 1 }] },
    ]);
  });

  it("sensor records page by limit with a next-page token; images and tracks only when asked", async () => {
    const q = { deviceId: "cam-1", sensors: ["gate"], startTime: "2026-11-23T00:00:00Z", endTime: "2026-11-24T00:00:00Z", limit: 2 };
    const first = await call("POST", "/data/sensor/query", q);
    expect(first.status).toBe(200);
    expect(first.body.map((r: any) => r.id)).toEqual(["gate-0", "gate-1"]);
    expect(first.body[0]).toEqual({ id: "gate-0", deviceId: "cam-1", objectType: "car", sensorName: "gate", direction: "NORTH", timeCollected: "2026-11-23T10:05:00.000Z", value: 1, boundingBoxImage: null, frameImage: null, track: null });
    const token = first.headers.get("x-next-page-token")!;
    const second = await call("POST", "/data/sensor/query", { ...q, pageToken: token, withImages: true, withTracks: true });
    expect(second.body.map((r: any) => r.id)).toEqual(["gate-2", "gate-3"]);
    expect(second.body[0]).toMatchObject({ frameImage: "https://x/frame-2.jpg", track: [[2, 2]] });
    const third = await call("POST", "/data/sensor/query", { ...q, pageToken: second.headers.get("x-next-page-token") });
    expect(third.body.map((r: any) => r.id)).toEqual(["gate-4"]);
    expect(third.headers.get("x-next-page-token")).toBeNull();
  });

  it("events by id, sensor listings per device and workspace, the latest stream record", async () => {
    const e = await call("GET", "/data/id/ws1/speed-1");
    expect(e.body).toEqual([{ deviceId: "cam-1", objectType: "car", timeCollected: "2026-11-23T10:15:00.000Z", uniqueId: null, confidence: null, model: null, length: null, speed: 20, sensorData: { sensorName: "speed", objectClass: "car", direction: "NORTH", speed: 20 }, track: null, bboxImg: null, frameImg: null }]);
    expect((await call("GET", "/data/id/ws2/speed-1")).status).toBe(404);
    const dev = await call("GET", "/device/cam-1/sensors?startTime=2026-11-23T00:00:00Z&endTime=2026-11-24T00:00:00Z");
    expect(dev.body.map((s: any) => `${s.sensorName} ${s.direction} ${s.objectType} ${s.count} ${s.lastTimeCollected.slice(11, 16)}`)).toEqual(["door null person 1 10:30", "gate NORTH car 3 11:10", "gate SOUTH car 2 12:30", "speed NORTH car 4 11:30"]);
    const ws = await call("GET", "/workspace/ws1/sensors?startTime=2026-11-23T00:00:00Z&endTime=2026-11-24T00:00:00Z");
    expect(ws.body.map((s: any) => s.deviceId)).toContain("cam-2");
    expect((await call("GET", "/workspace/ws1/sensors?startTime=2026-11-23T00:00:00Z")).status).toBe(400);
    const latest = await call("GET", "/data/stream/s-1/latest?sensorId=sensor-door");
    expect(latest.body).toMatchObject({ workspaceId: "ws1", streamId: "s-1", id: "door-1", sensorId: "sensor-door", objectType: "person", value: 0, meta: { active: true, numObjectsInRegion: 1, startOn: T("10:30").getTime(), object: { uniqueId: 7 } } });
    expect((await call("GET", "/data/stream/s-1/latest")).body.id).toBe("gate-4");
  });

  it("media: latest, query, and the bytes by id", async () => {
    const latest = await call("GET", "/media/s-1/latest");
    expect(latest.body.map((m: any) => m.id)).toEqual(["m-img-1", "m-vid-1"]);
    expect(latest.body[0]).toMatchObject({ workspaceId: "ws1", streamId: "s-1", deviceId: "cam-1", mediaType: "IMAGE", captureType: "RAW", events: [{ eventId: "gate-0" }], url: `${server.url}/media/s-1?mediaId=m-img-1` });
    expect(JSON.stringify(latest.body)).not.toContain("file://"); // storage locations stay on the server
    const q = await call("POST", "/media/query", { streamId: "s-1", mediaType: "VIDEO", startTime: "2026-11-23T09:00:00Z", endTime: "2026-11-23T11:00:00Z" });
    expect(q.body.map((m: any) => [m.id, m.durationMs])).toEqual([["m-vid-1", 5000]]);
    const bytes = await call("GET", "/media/s-1?mediaId=m-img-1");
    expect(bytes.status).toBe(200);
    expect(bytes.headers.get("content-type")).toBe("image/jpeg");
    expect(Buffer.compare(bytes.body as Buffer, jpeg)).toBe(0);
    expect((await call("GET", "/media/s-1?mediaId=nope")).status).toBe(404);
    expect((await call("GET", "/media/s-1/latest?mediaType=AUDIO")).status).toBe(400);
  });
});

describe("aggregations on the embedded PGlite", () => {
  let restore: () => Promise<void>;
  beforeAll(async () => {
    restore = await switchDatabase("data-api-pglite");
    await insertEvents(EVENTS);
  }, 120_000);
  afterAll(async () => {
    await restore?.();
  });

  it("computes the same windows, percentiles and filled windows", async () => {
    const url = new URL("http://x/data/query?startTime=2026-11-23T10:00:00Z&endTime=2026-11-23T12:00:00Z");
    const rows = await deviceAggregate(url, { deviceId: "cam-1", sensors: ["speed", "gate"], interval: "30 minutes", functions: ["COUNT", "MEDIAN"], fillEmptyWindows: true });
    const s = rows.map((r) => `${r.windowStart.slice(11, 16)} ${r.sensorName} ${r.direction} ${r.values.map((v) => v.value).join("/")}`);
    // windows of 30 minutes from 10:00; empty ones count 0 and have no median
    expect(s).toEqual([
      "10:00 gate NORTH 2/1",
      "10:00 gate SOUTH 0/",
      "10:00 speed NORTH 2/15",
      "10:30 gate NORTH 0/",
      "10:30 gate SOUTH 1/1",
      "10:30 speed NORTH 1/30",
      "11:00 gate NORTH 1/1",
      "11:00 gate SOUTH 0/",
      "11:00 speed NORTH 0/",
      "11:30 gate NORTH 0/",
      "11:30 gate SOUTH 0/",
      "11:30 speed NORTH 1/40",
    ]);
  });
});
