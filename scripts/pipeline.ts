/**
 * `npm run pipeline -- --config FILE [--dry-run]`: runs the analytics pipeline's File entry point
 * (docs/sensors.md) on the configuration's VIDEO_IN and stores the events in the database
 * (DATABASE_URL, or the embedded one in OBSCURA_DATA_DIR: stop `npm start` first, the embedded
 * database takes one process at a time). Progress on stderr, a summary as JSON on stdout.
 * Exit codes: 0 done, 1 failed, 2 bad usage or configuration.
 */
import fs from "node:fs";

const args = process.argv.slice(2);
const at = args.indexOf("--config");
const file = at >= 0 ? args[at + 1] : undefined;
const dryRun = args.includes("--dry-run");
if (!file || args.includes("--help")) {
  process.stderr.write("usage: npm run pipeline -- --config pipeline.json [--dry-run]\n  (--dry-run: analyse and print the events, store nothing)\n");
  process.exit(file ? 0 : 2);
}
let config: unknown;
try {
  config = JSON.parse(fs.readFileSync(file, "utf8"));
} catch (e) {
  process.stderr.write(`cannot read ${file} as JSON: ${(e as Error).message}\n`);
  process.exit(2);
}
const { pipelineConfig, runFilePipeline } = await import("../server/analytics/pipeline");
try {
  pipelineConfig(config, file);
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(2);
}
let last = -1;
try {
  const r = await runFilePipeline(config, {
    store: !dryRun,
    onProgress: (done, total) => {
      const pct = total ? Math.floor((done / total) * 100) : 0;
      if (pct !== last) process.stderr.write(`\r[pipeline] ${pct}% (${done}/${total} frames)`);
      last = pct;
    },
  });
  process.stderr.write("\n");
  const summary = { frames: r.frames, analysedFrames: r.analysedFrames, seconds: r.seconds, events: r.events.length, stored: !dryRun, bySensor: Object.fromEntries([...new Set(r.events.map((e) => e.sensorName))].map((n) => [n, r.events.filter((e) => e.sensorName === n).length])) };
  process.stdout.write(JSON.stringify(dryRun ? { ...summary, list: r.events } : summary, null, 2) + "\n");
  if (!dryRun) await (await import("../server/db/client")).closeRuntime();
  process.exit(0);
} catch (e) {
  process.stderr.write(`\npipeline failed: ${(e as Error).message}\n`);
  process.exit(1);
}
