/**
 * Data API aggregation at scale: N events (default 10 million) over 30 days, on PGlite and on the
 * PostgreSQL server (127.0.0.1:5432, a throwaway database), then POST /data/query's aggregation
 * (deviceAggregate) by 1 hour over the 30 days for each function, timed (best of 2). Each database
 * runs in its own process. Writes bench/results/aggregate.json.
 *   node --import tsx bench/aggregate.ts [--events 10000000] [--db pglite,postgres]
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "../test/helpers/server";

const arg = (name: string) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);
const events = Number(arg("events")) || 10_000_000;
const START = "2026-10-01T00:00:00Z";
const END = "2026-10-31T00:00:00Z";
const DEVICES = 4;
const SENSORS = 5;

if (arg("child")) {
  // one database: fill it, then time the queries; the result goes to --out
  const { db, closeRuntime } = await import("../server/db/client");
  const { sql } = await import("drizzle-orm");
  const { deviceAggregate, FUNCTIONS } = await import("../server/data-api/query");
  const d = await db();
  const t0 = performance.now();
  const chunk = 500_000;
  for (let from = 1; from <= events; from += chunk) {
    const to = Math.min(events, from + chunk - 1);
    await d.execute(sql`
      insert into sensor_events (id, workspace_id, device_id, stream_id, sensor_id, sensor_name, sensor_type, direction, object_type, unique_id, value, time_collected, data)
      select 'e' || g, 'ws', 'cam-' || (g % ${DEVICES}), 's-' || (g % ${DEVICES}), 'sensor-' || (g % ${SENSORS}), 'sensor-' || (g % ${SENSORS}), 'SPEED',
        case when g % 2 = 0 then 'NORTH' else 'SOUTH' end, 'car', g, ((g * 7919) % 1000) / 10.0,
        ${START}::timestamptz + (g::float8 / ${events}) * interval '30 days', '{}'::jsonb
      from generate_series(${from}::bigint, ${to}::bigint) g`);
    process.stderr.write(`\r[bench] aggregate ${arg("child")}: ${to.toLocaleString("en")} / ${events.toLocaleString("en")} events stored`);
  }
  await d.execute(sql`analyze sensor_events`);
  const insertSeconds = (performance.now() - t0) / 1000;
  process.stderr.write("\n");
  const url = new URL(`http://x/data/query?startTime=${START}&endTime=${END}`);
  const body = (f: string) => ({ deviceId: "cam-1", sensors: Array.from({ length: SENSORS }, (_, i) => `sensor-${i}`), interval: "1 hour", functions: [f], fillEmptyWindows: true });
  const perFunction: Record<string, { ms: number; windows: number }> = {};
  for (const f of FUNCTIONS) {
    let best = Infinity;
    let windows = 0;
    for (let i = 0; i < 2; i++) {
      const q0 = performance.now();
      const rows = await deviceAggregate(url, body(f));
      best = Math.min(best, performance.now() - q0);
      windows = rows.length;
    }
    perFunction[f] = { ms: Math.round(best), windows };
    process.stderr.write(`[bench] aggregate ${arg("child")}: ${f} ${Math.round(best)} ms (${windows} windows)\n`);
  }
  await closeRuntime();
  fs.writeFileSync(arg("out")!, JSON.stringify({ events, eventsPerDevice: events / DEVICES, insertSeconds: Math.round(insertSeconds), perFunction }));
  process.exit(0);
}

const dbs = (arg("db") ?? "pglite,postgres").split(",");
const results: Record<string, unknown> = {};
for (const which of dbs) {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), OBSCURA_DATA_DIR: tempDir(`bench-aggregate-${which}`) };
  let drop: (() => void) | null = null;
  if (which === "postgres") {
    const name = `obscura_bench_${process.pid}`;
    spawnSync("psql", ["-h", "127.0.0.1", "-U", "postgres", "-c", `create database ${name}`], { stdio: "ignore" });
    env.DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${name}`;
    drop = () => void spawnSync("psql", ["-h", "127.0.0.1", "-U", "postgres", "-c", `drop database if exists ${name}`], { stdio: "ignore" });
  } else delete env.DATABASE_URL;
  const outFile = path.join(env.OBSCURA_DATA_DIR!, "result.json");
  const r = spawnSync(process.execPath, ["--import", "tsx", "bench/aggregate.ts", "--child", which, "--events", String(events), "--out", outFile], { env: env as NodeJS.ProcessEnv, stdio: ["ignore", "ignore", "inherit"] });
  const result = r.status === 0 && fs.existsSync(outFile) ? JSON.parse(fs.readFileSync(outFile, "utf8")) : { error: `exit ${r.status ?? r.signal}` };
  drop?.();
  fs.rmSync(env.OBSCURA_DATA_DIR!, { recursive: true, force: true });
  results[which] = result;
}
const out = { events, range: { start: START, end: END }, interval: "1 hour", windowsPerSensor: 720, query: `deviceAggregate: 1 device (${events / DEVICES} events), ${SENSORS} sensors, fillEmptyWindows`, results };
fs.mkdirSync(path.join("bench", "results"), { recursive: true });
fs.writeFileSync(path.join("bench", "results", "aggregate.json"), JSON.stringify(out, null, 2) + "\n");
console.log(JSON.stringify(out, null, 2));
