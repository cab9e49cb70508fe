/**
 * Scale-out on the PostgreSQL server at 127.0.0.1:5432: one web node without workers, two
 * `npm run worker` processes sharing the queue, internal state on S3 (s3rver). Each job runs once;
 * a worker killed with SIGKILL mid-job leaves a retried operation, or, with no retries left, a
 * failed one with a clear message.
 */
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestVideo } from "./helpers/fixtures";
import { fileUri, startServer, startWorker, tempDir, tempPostgres, TOKEN, type Proc, type TestServer } from "./helpers/server";
import { startS3rver } from "./helpers/storage-servers";

let dir: string;
let clip: string;
let long: string;
let s3: Awaited<ReturnType<typeof startS3rver>>;

beforeAll(async () => {
  dir = tempDir("scale");
  clip = path.join(dir, "clip.mp4");
  long = path.join(dir, "long.mp4");
  await makeTestVideo(clip, { seconds: 2, width: 320, height: 240 });
  await makeTestVideo(long, { seconds: 30, width: 640, height: 480 });
  s3 = await startS3rver();
});
afterAll(async () => {
  await s3?.stop();
});

async function cluster(workerCount: number, extra: Record<string, string> = {}) {
  const db = await tempPostgres();
  const env = { DATABASE_URL: db.url, OBSCURA_STATE_URI: `s3://${s3.bucket}/obscura-${Date.now()}/sessions/`, ...s3.env, ...extra };
  const web = await startServer({ ...env, OBSCURA_WORKERS: "0" });
  const workers: Proc[] = [];
  for (let i = 0; i < workerCount; i++) workers.push(startWorker({ ...env, OBSCURA_API_TOKEN: TOKEN }));
  await Promise.all(workers.map((w) => w.waitFor(/worker ready/)));
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  return {
    web,
    workers,
    sql,
    env,
    addWorker() {
      const w = startWorker({ ...env });
      workers.push(w);
      return w;
    },
    async close() {
      await sql.end();
      await Promise.all(workers.map((w) => w.stop()));
      await web.stop();
      await db.drop();
    },
  };
}

async function opRow(sql: pg.Client, name: string) {
  const id = name.split("/").pop();
  const r = await sql.query("select status, attempts, worker from operations where id = $1", [id]);
  return r.rows[0] as { status: string; attempts: number; worker: string | null };
}

describe("two worker processes on one queue", () => {
  let c: Awaited<ReturnType<typeof cluster>>;
  beforeAll(async () => {
    c = await cluster(2);
  });
  afterAll(async () => {
    await c?.close();
  });

  it("share the work and run each job once", async () => {
    const t0 = Date.now();
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await c.web.api("POST", "/api/v1/videos:process", {
        inputUri: fileUri(clip),
        features: ["FACE_DETECTION", "MEDIA_RENDER"],
        outputUri: fileUri(path.join(dir, `shared-${i}.mp4`)),
        // the queue is under test here, not the leak check (a second detection pass per job)
        videoContext: { renderConfig: { videoPreset: "MEDIUM", leakCheck: false } },
      });
      expect(r.status).toBe(200);
      names.push(r.body.name);
    }
    for (const n of names) expect((await c.web.waitDone(n, 120_000)).error).toBeUndefined();
    const rows = [];
    for (const n of names) rows.push(await opRow(c.sql, n));
    const byWorker = new Set(rows.map((r) => r.worker));
    console.log(`6 jobs on 2 workers: ${Date.now() - t0} ms; per worker: ${JSON.stringify(rows.map((r) => r.worker))}`);
    expect(rows.every((r) => r.attempts === 1 && r.status === "succeeded")).toBe(true);
    expect(byWorker.size).toBe(2);
    const jobs = await c.sql.query("select count(*)::int as n from pgboss.job where name = 'obscura-process' and state = 'completed'");
    expect(jobs.rows[0].n).toBe(6);
    // the internal state went to S3, where any node can read it
    const st = await c.web.api("POST", "/api/v1/videos:process", { inputUri: fileUri(clip), features: ["MEDIA_PREPARE"], videoContext: { prepareConfig: { sessionId: "s3-state" } } });
    const op = await c.web.waitDone(st.body.name);
    expect(op.response.processResults.outputUri).toMatch(/^s3:\/\/obscura-test\/obscura-\d+\/sessions\/s3-state\/$/);
  });
});

describe("a worker killed mid-job", () => {
  const submitLong = (c: Awaited<ReturnType<typeof cluster>>, out: string) =>
    c.web.api("POST", "/api/v1/videos:process", {
      inputUri: fileUri(long),
      features: ["MEDIA_RENDER"],
      outputUri: fileUri(path.join(dir, out)),
      videoContext: { renderConfig: { videoPreset: "FAST", leakCheck: false } },
    });

  it("leaves an operation that another worker retries to success", async () => {
    const c = await cluster(1, { OBSCURA_JOB_HEARTBEAT_SECONDS: "10" });
    try {
      const r = await submitLong(c, "survivor.mp4");
      await c.workers[0]!.waitFor(/operation started/, 60_000);
      await new Promise((res) => setTimeout(res, 1500));
      c.workers[0]!.kill();
      const killedAt = Date.now();
      const second = c.addWorker();
      await second.waitFor(/operation started/, 60_000);
      const retriedAfter = Date.now() - killedAt;
      const op = await c.web.waitDone(r.body.name, 180_000);
      expect(op.error).toBeUndefined();
      const row = await opRow(c.sql, r.body.name);
      console.log(`killed worker: job retried ${retriedAfter} ms after SIGKILL (heartbeat 10 s)`);
      expect(row.attempts).toBe(2);
      expect(retriedAfter).toBeLessThan(40_000);
    } finally {
      await c.close();
    }
  });

  it("ends the operation failed with a clear message when no retry is left", async () => {
    const c = await cluster(1, { OBSCURA_JOB_HEARTBEAT_SECONDS: "10", OBSCURA_JOB_RETRY_LIMIT: "0" });
    try {
      const r = await submitLong(c, "lost.mp4");
      await c.workers[0]!.waitFor(/operation started/, 60_000);
      c.workers[0]!.kill();
      const killedAt = Date.now();
      c.addWorker();
      const op = await c.web.waitDone(r.body.name, 90_000);
      console.log(`killed worker, no retries: operation failed ${Date.now() - killedAt} ms after SIGKILL`);
      expect(op.error.code).toBe(10);
      expect(op.error.message).toMatch(/worker processing this operation stopped/);
    } finally {
      await c.close();
    }
  });
});

describe("analytics pipelines across worker processes", () => {
  it("run several per worker on two workers; a killed worker's pipelines start again elsewhere; all stop on request", async () => {
    const c = await cluster(2, { OBSCURA_JOB_HEARTBEAT_SECONDS: "10", OBSCURA_PIPELINES_PER_WORKER: "2" });
    try {
      const sharp = (await import("sharp")).default;
      const image = path.join(dir, "loop.png");
      await sharp({ create: { width: 320, height: 240, channels: 3, background: "#456" } }).png().toFile(image);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await c.web.api("POST", "/api/v1/pipelines", { name: `loop-${i}`, config: { entryPoint: "ImageLoop", VIDEO_IN: image, loopCount: 0, enabledClasses: "car", storeEvents: false } });
        expect(r.status).toBe(201);
        ids.push(r.body.id);
      }
      const rows = async () => (await c.sql.query("select id, state, worker, attempts from pipelines order by name")).rows as Array<{ id: string; state: string; worker: string; attempts: number }>;
      const until = async (ok: (r: Awaited<ReturnType<typeof rows>>) => boolean, ms: number) => {
        const t0 = Date.now();
        for (;;) {
          const r = await rows();
          if (ok(r)) return r;
          if (Date.now() - t0 > ms) throw new Error(`pipelines stayed ${JSON.stringify(r)}`);
          await new Promise((res) => setTimeout(res, 500));
        }
      };
      const running = await until((r) => r.every((p) => p.state === "RUNNING"), 60_000);
      const workers = new Set(running.map((p) => p.worker));
      expect(workers.size).toBe(2); // 3 pipelines, 2 per worker: both workers hold some
      // kill the worker holding the most pipelines; a fresh worker gives the room they need
      const byWorker = [...workers].map((w) => [w, running.filter((p) => p.worker === w).map((p) => p.id)] as const).sort((a, b) => b[1].length - a[1].length);
      const [victimName, victimIds] = byWorker[0]!;
      const victim = c.workers.find((w) => victimName.endsWith(`:${w.proc.pid}`))!;
      victim.kill();
      const killedAt = Date.now();
      c.addWorker();
      const again = await until((r) => r.every((p) => p.state === "RUNNING" && p.worker !== victimName), 90_000);
      console.log(`pipelines of a killed worker running again ${Date.now() - killedAt} ms after SIGKILL (heartbeat 10 s)`);
      for (const p of again) expect(p.attempts).toBe(victimIds.includes(p.id) ? 2 : 1);
      for (const id of ids) expect((await c.web.api("POST", `/api/v1/pipelines/${id}:stop`)).status).toBe(200);
      await until((r) => r.every((p) => p.state === "STOPPED"), 30_000);
    } finally {
      await c.close();
    }
  }, 240_000);
});
