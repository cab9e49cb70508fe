export {};
/**
 * `npm run worker`: a worker process without the web server, for scale-out. It needs the shared
 * PostgreSQL (DATABASE_URL) and shared storage for the internal state (OBSCURA_STATE_URI, e.g.
 * s3://bucket/obscura/sessions/); OBSCURA_WORKERS jobs run at once (default 1).
 */
const { config } = await import("../server/config");
const { closeRuntime } = await import("../server/db/client");
const { startWorkers } = await import("../server/jobs/worker");
const { log, logUnhandled } = await import("../server/log");
logUnhandled();

const c = config();
if (!c.databaseUrl) {
  console.error("npm run worker needs DATABASE_URL (a PostgreSQL server shared with the web nodes); the embedded database serves only the in-process worker of `npm start`.");
  process.exit(2);
}
const workers = await startWorkers(Math.max(1, c.workers));
void (await import("../server/vision/engine")).prepareModels();
log.info("worker ready", { concurrency: Math.max(1, c.workers), stateUri: c.stateUri.startsWith("file:") ? c.stateUri : "(remote)" });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info("worker stopping", { signal });
  await workers.stop().catch(() => {});
  await closeRuntime().catch(() => {});
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
