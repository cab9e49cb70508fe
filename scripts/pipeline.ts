/**
 * `npm run pipeline -- --config FILE [--set name=value ...] [--dry-run] [--quiet]`: runs the
 * analytics pipeline (docs/pipeline.md) from a YAML or JSON configuration in this process, until
 * its source ends (File, a finite ImageLoop, FolderWatch with watchIdleStopMs) or Ctrl-C (RTSP,
 * FolderWatch). Events go to the database (DATABASE_URL, or the embedded one in OBSCURA_DATA_DIR:
 * stop `npm start` first, the embedded database takes one process at a time); --dry-run stores
 * nothing and prints the events. Progress on stderr, a summary as JSON on stdout.
 * Exit codes: 0 done, 1 failed, 2 bad usage or configuration.
 */
export {};
const args = process.argv.slice(2);
const at = args.indexOf("--config");
const file = at >= 0 ? args[at + 1] : undefined;
const dryRun = args.includes("--dry-run");
const quiet = args.includes("--quiet");
if (!file || args.includes("--help")) {
  process.stderr.write(
    "usage: npm run pipeline -- --config pipeline.yaml [--set name=value ...] [--dry-run] [--quiet]\n" +
      "  --set       overrides one parameter of the file (repeatable)\n" +
      "  --dry-run   analyse and print the events, store nothing\n",
  );
  process.exit(file ? 0 : 2);
}
const overrides: Record<string, string> = {};
args.forEach((a, i) => {
  if (a !== "--set") return;
  const kv = args[i + 1] ?? "";
  const eq = kv.indexOf("=");
  if (eq <= 0) {
    process.stderr.write(`--set needs name=value, got ${JSON.stringify(kv)}\n`);
    process.exit(2);
  }
  overrides[kv.slice(0, eq)] = kv.slice(eq + 1);
});

const { readConfigFile } = await import("../server/analytics/config");
const { Pipeline } = await import("../server/analytics/pipeline");
const path = await import("node:path");
let pipeline: Awaited<ReturnType<typeof Pipeline.create>>;
const events: unknown[] = [];
try {
  const raw = { ...readConfigFile(file), ...overrides, ...(dryRun ? { storeEvents: false } : {}) };
  pipeline = await Pipeline.create(raw, {
    where: file,
    configPath: path.resolve(file),
    onOutput: (o) => {
      if (dryRun && o.sensorEvents) events.push(...o.sensorEvents);
    },
    onProgress: (s) => {
      if (!quiet) process.stderr.write(`\r[pipeline] ${s.framesAnalysed} frames analysed, ${s.outputs} outputs, ${s.events} events, ${s.fps} fps${s.framesDropped ? `, ${s.framesDropped} dropped` : ""}   `);
    },
  });
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(2);
}
const controller = new AbortController();
process.on("SIGINT", () => controller.abort());
process.on("SIGTERM", () => controller.abort());
try {
  const s = await pipeline.run(controller.signal);
  process.stderr.write("\n");
  process.stdout.write(JSON.stringify({ entryPoint: pipeline.config.entryPoint, ...s, stored: !dryRun, ...(dryRun ? { sensorEvents: events } : {}) }, null, 2) + "\n");
  if (!dryRun) await (await import("../server/db/client")).closeRuntime().catch(() => {});
  process.exit(0);
} catch (e) {
  process.stderr.write(`\npipeline failed: ${(e as Error).message}\n`);
  process.exit(1);
}
