/**
 * `npm run bench`: service-core benchmarks, measured side by side in one run, JSON out.
 *  - queue: the same batch of render jobs through one web node and 1 vs 2 `npm run worker`
 *    processes sharing one PostgreSQL queue (the scale-out path); reports the speed-up ratio.
 *  - accept: latency of POST videos:process (validate, insert, enqueue) on PGlite and PostgreSQL.
 * Writes bench/results/queue.json and prints it. Needs PostgreSQL at 127.0.0.1:5432.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { makeTestVideo } from "../test/helpers/fixtures";
import { barChart } from "./svg";
import { fileUri, startServer, startWorker, tempDir, tempPostgres, TOKEN } from "../test/helpers/server";

const JOBS = Number(process.env.BENCH_JOBS ?? 12);
const dir = tempDir("bench");
const clip = path.join(dir, "clip.mp4");
await makeTestVideo(clip, { seconds: 4, width: 640, height: 360 });

const progress = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

async function queueRun(workers: number) {
  const db = await tempPostgres();
  const env = { DATABASE_URL: db.url, OBSCURA_STATE_URI: fileUri(path.join(dir, `state-${workers}`)) + "/" };
  const web = await startServer({ ...env, OBSCURA_WORKERS: "0" });
  const procs = Array.from({ length: workers }, () => startWorker({ ...env, OBSCURA_API_TOKEN: TOKEN }));
  await Promise.all(procs.map((p) => p.waitFor(/worker ready/)));
  try {
    const t0 = performance.now();
    const names: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const r = await web.api("POST", "/api/v1/videos:process", {
        inputUri: fileUri(clip),
        features: ["MEDIA_PREPARE", "MEDIA_RENDER"],
        outputUri: fileUri(path.join(dir, `out-${workers}-${i}.mp4`)),
        videoContext: { renderConfig: { videoPreset: "FAST" } },
      });
      names.push(r.body.name);
    }
    let done = 0;
    for (const n of names) {
      const op = await web.waitDone(n, 600_000);
      if (op.error) throw new Error(`job failed: ${op.error.message}`);
      progress(`${workers} worker(s): ${++done}/${JOBS} done`);
    }
    const seconds = (performance.now() - t0) / 1000;
    return { workers, jobs: JOBS, seconds: +seconds.toFixed(2), jobsPerMinute: +((JOBS / seconds) * 60).toFixed(1) };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await web.stop();
    await db.drop();
  }
}

async function acceptLatency(kind: "pglite" | "postgres") {
  const db = kind === "postgres" ? await tempPostgres() : null;
  const web = await startServer({ OBSCURA_WORKERS: "0", ...(db ? { DATABASE_URL: db.url } : {}) });
  try {
    const ms: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t = performance.now();
      const r = await web.api("POST", "/api/v1/videos:process", { inputUri: fileUri(clip), features: ["FACE_DETECTION", "MEDIA_RENDER"] });
      if (r.status !== 200) throw new Error(`POST answered ${r.status}`);
      if (i >= 10) ms.push(performance.now() - t); // first 10 warm up
    }
    ms.sort((a, b) => a - b);
    const q = (p: number) => +ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!.toFixed(1);
    return { database: kind, requests: ms.length, p50Ms: q(0.5), p95Ms: q(0.95) };
  } finally {
    await web.stop();
    await db?.drop();
  }
}

progress(`queue: ${JOBS} render jobs (4 s 640x360, preset FAST) with 1 then 2 workers`);
const one = await queueRun(1);
const two = await queueRun(2);
progress("accept latency: PGlite and PostgreSQL");
const accept = [await acceptLatency("pglite"), await acceptLatency("postgres")];
const result = {
  benchmark: "service-core",
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, node: process.version },
  queue: [one, two],
  twoWorkerSpeedup: +(one.seconds / two.seconds).toFixed(2),
  accept,
};
fs.mkdirSync(path.join("bench", "results"), { recursive: true });
fs.writeFileSync(path.join("bench", "results", "queue.json"), JSON.stringify(result, null, 2) + "\n");
fs.writeFileSync(
  path.join("bench", "results", "queue.svg"),
  barChart(`Render jobs through one PostgreSQL queue (${JOBS} jobs, ${os.cpus().length} cores)`, "jobs/min", [
    { label: "1 worker process", value: one.jobsPerMinute },
    { label: "2 worker processes", value: two.jobsPerMinute, note: `${result.twoWorkerSpeedup}x` },
  ]),
);
console.log(JSON.stringify(result, null, 2));
fs.rmSync(dir, { recursive: true, force: true });
