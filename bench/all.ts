/**
 * `npm run bench`: every benchmark, one after another (each in its own process so one's threads
 * and caches do not colour the next), then one JSON of all results, written to
 * bench/results/bench.json and printed. Progress goes to stderr.
 *   npm run bench [-- queue models video render]   (default: all)
 * - queue:  job-queue throughput on PostgreSQL (bench/queue.ts; needs 127.0.0.1:5432)
 * - models: each converted model in onnxruntime-node against TF.js-wasm on the same input (bench/models.ts)
 * - video:  analysis speed of a 720p clip through detection + tracking (bench/video.ts)
 * - render: redacted render against a plain ffmpeg transcode of the same clip, 1080p progress (bench/render.ts)
 * - render-memory: peak memory of a 1080p render, 1 min vs 3 min clip (bench/render-memory.ts; --minutes 10 by hand)
 * - editor: the review editor in chromium with a 10-minute video and 2,000 tracks: seek and drag (bench/editor.ts)
 * - detection: POST /v1/detections (people, faces, every face option) on a 1080p photo by 1, 4 and 16 clients (bench/detection.ts)
 * - pipeline: analytics pipeline frames per second on a 720p file; an RTSP stream read for a minute with memory sampled (bench/pipeline.ts)
 * - aggregate: Data API aggregation of 10 million events over 30 days by hour, each function, PGlite and PostgreSQL (bench/aggregate.ts)
 * A benchmark that fails is reported with its exit code and the rest still run; the exit code
 * is non-zero when any failed.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const ALL = ["queue", "models", "video", "render", "render-memory", "editor", "detection", "pipeline", "aggregate"] as const;
const asked = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const unknown = asked.filter((a) => !(ALL as readonly string[]).includes(a));
if (unknown.length) {
  console.error(`unknown benchmark ${unknown.map((u) => JSON.stringify(u)).join(", ")}; choose from ${ALL.join(", ")}`);
  process.exit(2);
}
const chosen = asked.length ? asked : [...ALL];
const results: Record<string, unknown> = {};
let failed = 0;
for (const name of chosen) {
  process.stderr.write(`[bench] ${name}: starting\n`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ["--import", "tsx", path.join("bench", `${name}.ts`)], { stdio: ["ignore", "ignore", "inherit"], env: process.env });
  const file = path.join("bench", "results", `${name}.json`);
  if (r.status === 0 && fs.existsSync(file)) results[name] = JSON.parse(fs.readFileSync(file, "utf8"));
  else {
    failed++;
    results[name] = { error: `bench/${name}.ts exited with ${r.status ?? r.signal}` };
  }
  process.stderr.write(`[bench] ${name}: ${r.status === 0 ? "done" : "FAILED"} in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
}
const out = { date: new Date().toISOString(), machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadavg: os.loadavg() }, results };
fs.mkdirSync(path.join("bench", "results"), { recursive: true });
fs.writeFileSync(path.join("bench", "results", "bench.json"), JSON.stringify(out, null, 2) + "\n");
console.log(JSON.stringify(out, null, 2));
process.exit(failed ? 1 : 0);
