/**
 * Detection API throughput: POST /v1/detections?type=all&faceOption=gender,landmark,emotion,pose,age
 * on a 1080p photo with five faces (face-api's sample5, cropped to 1920x1080), by 1, 4 and 16
 * clients at once against the real server (embedded database, bootstrap token). Reports requests
 * per second and latency percentiles per level, and how long GET /healthz (another route of the
 * same server) takes meanwhile: the server must stay responsive while the engine is busy.
 * Writes bench/results/detection.json and prints it.
 *   node --import tsx bench/detection.ts [--requests N]   (requests per client, default 4)
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { barChart } from "./svg";
import { startServer, TOKEN } from "../test/helpers/server";

const perClient = Number(process.argv[process.argv.indexOf("--requests") + 1]) || 4;
const LEVELS = [1, 4, 16];
const progress = (m: string) => process.stderr.write(`[bench] ${m}\n`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : null;
};
const round = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);

const photo = await sharp(path.resolve("node_modules/@vladmandic/face-api/demo/sample5.jpg")).resize(1920, 1080, { fit: "cover" }).jpeg({ quality: 90 }).toBuffer();
const server = await startServer({ OBSCURA_DETECT_QUEUE: "64" });
const url = `${server.url}/v1/detections?type=all&faceOption=gender,landmark,emotion,pose,age`;

async function call(): Promise<{ ms: number; status: number; faces: number }> {
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "x-access-token": TOKEN, "content-type": "application/octet-stream" }, body: new Uint8Array(photo) });
  const body = (await res.json()) as { objects?: Array<{ type: string }> };
  return { ms: performance.now() - t0, status: res.status, faces: body.objects?.filter((o) => o.type === "face").length ?? 0 };
}

try {
  progress("warm-up");
  const warm = await call();
  if (warm.status !== 200) throw new Error(`warm-up answered ${warm.status}`);
  const levels = [];
  for (const clients of LEVELS) {
    progress(`${clients} client(s) x ${perClient} requests`);
    const health: number[] = [];
    let stop = false;
    const prober = (async () => {
      while (!stop) {
        const t0 = performance.now();
        await fetch(`${server.url}/healthz`).then((r) => r.text());
        health.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const t0 = performance.now();
    const results = (await Promise.all(Array.from({ length: clients }, async () => {
      const out = [];
      for (let i = 0; i < perClient; i++) out.push(await call());
      return out;
    }))).flat(); // prettier-ignore
    const seconds = (performance.now() - t0) / 1000;
    stop = true;
    await prober;
    const ok = results.filter((r) => r.status === 200);
    const ms = ok.map((r) => r.ms);
    levels.push({
      clients,
      requests: results.length,
      ok: ok.length,
      statuses: Object.fromEntries([...new Set(results.map((r) => r.status))].map((s) => [s, results.filter((r) => r.status === s).length])),
      facesPerImage: ok[0]?.faces ?? 0,
      requestsPerSecond: round(ok.length / seconds),
      latencyMs: { p50: round(pct(ms, 50)), p95: round(pct(ms, 95)), max: round(Math.max(...ms)) },
      healthzMs: { samples: health.length, p50: round(pct(health, 50)), p95: round(pct(health, 95)), max: round(Math.max(...health)) },
    });
  }
  const out = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version, loadavg: os.loadavg() },
    request: "POST /v1/detections?type=all&faceOption=gender,landmark,emotion,pose,age, 1920x1080 JPEG, 5 faces",
    levels,
  };
  fs.mkdirSync(path.join("bench", "results"), { recursive: true });
  fs.writeFileSync(path.join("bench", "results", "detection.json"), JSON.stringify(out, null, 2) + "\n");
  fs.writeFileSync(
    path.join("docs", "img", "bench-detection.svg"),
    barChart(
      "Detection API: type=all + every face option, 1080p, 5 faces",
      "requests/s",
      levels.map((l) => ({ label: `${l.clients} client${l.clients > 1 ? "s" : ""}`, value: l.requestsPerSecond ?? 0, note: `p50 ${Math.round(l.latencyMs.p50 ?? 0)} ms, p95 ${Math.round(l.latencyMs.p95 ?? 0)} ms` })),
    ),
  );
  console.log(JSON.stringify(out, null, 2));
} finally {
  await server.stop();
}
