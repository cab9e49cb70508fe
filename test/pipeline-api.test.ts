/**
 * Pipelines over REST (docs/pipeline.md#rest) against a real server on PostgreSQL: create (JSON or
 * YAML), list, status with live statistics, stop; a bad configuration is a 400 naming the
 * parameter; secrets never come back.
 */
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { carSvg } from "./helpers/cars";
import { startServer, tempDir, tempPostgres, TOKEN, type TestServer } from "./helpers/server";

describe("pipelines over REST (PostgreSQL, in-process worker)", () => {
  let server: TestServer;
  let pg: { url: string; drop(): Promise<void> };
  let image = "";

  beforeAll(async () => {
    pg = await tempPostgres();
    server = await startServer({ DATABASE_URL: pg.url, OBSCURA_PIPELINES_PER_WORKER: "2" });
    image = path.join(tempDir("pipeline-api"), "car.png");
    await sharp(Buffer.from(carSvg("#1f5fbf", "7XYZ482", 0, 1))).png().toFile(image);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await pg?.drop();
  });

  const api = async (method: string, p: string, body?: unknown, type = "application/json") => {
    const r = await fetch(`${server.url}/api/v1/pipelines${p}`, { method, headers: { authorization: `Bearer ${TOKEN}`, "content-type": type }, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as Record<string, any> };
  };
  const waitFor = async (id: string, ok: (p: Record<string, any>) => boolean, ms = 90_000) => {
    const t0 = Date.now();
    for (;;) {
      const r = await api("GET", `/${id}`);
      if (ok(r.body)) return r.body;
      if (Date.now() - t0 > ms) throw new Error(`pipeline ${id} stayed ${JSON.stringify(r.body)}`);
      await new Promise((res) => setTimeout(res, 300));
    }
  };

  it("refuses bad requests with 400 naming the parameter, and callers without a token with 401", async () => {
    const bad = await api("POST", "", { config: { entryPoint: "ImageLoop", VIDEO_IN: image, fpsLimit: -1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/fpsLimit: fpsLimit must be 0 \(no limit\) or more \(got -1\)/);
    expect((await api("POST", "", { config: { VIDEO_IN: "/no/such.mp4" } })).body.error.message).toMatch(/VIDEO_IN: "\/no\/such.mp4" is not a file/);
    expect((await api("POST", "", { VIDEO_IN: image })).body.error.message).toMatch(/VIDEO_IN: not a field of a pipeline request; send name and config/);
    expect((await api("POST", "", { config: { entryPoint: "Direct" } })).body.error.message).toMatch(/Direct runs inside your own program/);
    expect((await api("GET", "?state=DONE")).status).toBe(400);
    expect((await api("GET", "/nope")).status).toBe(404);
    expect((await fetch(`${server.url}/api/v1/pipelines`)).status).toBe(401);
  });

  it("runs an endless ImageLoop in the worker, shows its statistics, stops on request; a File pipeline succeeds", async () => {
    const created = await api("POST", "", { name: "loop", config: { entryPoint: "ImageLoop", VIDEO_IN: image, loopCount: 0, enabledClasses: "car", amqpPassword: "s3cret", storeEvents: false, eventImageUri: "https://acct.blob.core.windows.net/events/?sv=2025-11-05&sig=S4SSIGNATURE" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "loop", state: "QUEUED", entryPoint: "ImageLoop" });
    expect(created.body.config.amqpPassword).toBe("***");
    const id = created.body.id as string;
    const running = await waitFor(id, (p) => p.state === "RUNNING" && p.stats.framesAnalysed >= 2);
    expect(running.worker).toMatch(/:\d+$/);
    expect(running.stats).toMatchObject({ inputs: 1, framesDropped: 0 });
    const list = await api("GET", "?state=RUNNING");
    expect(list.body.pipelines.map((p: { id: string }) => p.id)).toContain(id);
    const stopping = await api("POST", `/${id}:stop`);
    expect(stopping.status).toBe(200);
    expect(["STOPPING", "STOPPED"]).toContain(stopping.body.state);
    const stopped = await waitFor(id, (p) => p.state === "STOPPED");
    expect(stopped.endTime).not.toBeNull();
    expect(JSON.stringify(stopped)).not.toContain("s3cret");
    expect(JSON.stringify(stopped)).not.toContain("S4SSIGNATURE");
    expect(stopped.config.eventImageUri).toBe("https://acct.blob.core.windows.net/events/?sv=2025-11-05&sig=REDACTED");
    // the configuration as YAML; a file runs to its end
    const yaml = await api("POST", "", `entryPoint: File\nVIDEO_IN: ${image}\nenabledClasses: car\nstoreEvents: false\n`, "application/yaml");
    expect(yaml.status).toBe(201);
    const done = await waitFor(yaml.body.id, (p) => p.state === "SUCCEEDED" || p.state === "FAILED");
    expect(done).toMatchObject({ state: "SUCCEEDED", error: null, stats: { framesAnalysed: 1 } });
  }, 180_000);
});
