/**
 * `npm start`: builds the web app when needed, opens the database (embedded PGlite by default,
 * DATABASE_URL otherwise), applies migrations, starts OBSCURA_WORKERS in-process workers and
 * serves the Next.js app on PORT (default 9000).
 */
import http from "node:http";
import { buildIfNeeded } from "./build-if-needed";

(process.env as Record<string, string>).NODE_ENV = "production";
process.env.NEXT_TELEMETRY_DISABLED = "1";

const { config } = await import("../server/config");
const { runtime, closeRuntime } = await import("../server/db/client");
const { startWorkers } = await import("../server/jobs/worker");
const { ensureApiToken, apiTokenFile } = await import("../server/auth/bearer");
const { log, logUnhandled } = await import("../server/log");
logUnhandled();

// The web app's bundled route code cannot resolve the static ffmpeg packages by itself (the editor's
// frame thumbnails run ffmpeg there): resolve them here, once, and hand the paths down.
{
  const bin = await import("../server/media/binaries");
  try {
    process.env.OBSCURA_FFMPEG ||= bin.ffmpegPath();
    process.env.OBSCURA_FFPROBE ||= bin.ffprobePath();
  } catch (e) {
    log.warn("ffmpeg not found; video work will fail until it is installed", { error: (e as Error).message });
  }
}

const c = config();
buildIfNeeded(c.appDir);

const rt = await runtime();
ensureApiToken();
// Headless setup: the first admin and the licence from the environment (both idempotent).
await (await import("../server/identity/setup")).bootstrapFromEnv();
await (await import("../server/license")).installLicenseFromEnv();
if (!c.apiToken) log.info("API bearer token", { file: apiTokenFile(), hint: "export OBSCURA_API_TOKEN=$(cat <file>) or set your own" });
const workers = await startWorkers(c.workers);
if (c.workers > 0) void (await import("../server/vision/engine")).prepareModels();

const { default: next } = await import("next");
const app = next({ dev: false, dir: c.appDir, hostname: process.env.HOST ?? "0.0.0.0", port: c.port });
await app.prepare();
const handle = app.getRequestHandler();
const { stampClientAddress } = await import("../server/http/client-address");
// Which sites may show our pages in an iframe (docs/embedding.md); a malformed origin stops the start here.
const { embedOrigins, frameAncestorsPolicy } = await import("../server/embed/tokens");
const framePolicy = frameAncestorsPolicy(embedOrigins());
const server = http.createServer((req, res) => {
  stampClientAddress(req);
  res.setHeader("Content-Security-Policy", framePolicy);
  handle(req, res).catch((e: unknown) => {
    log.error("request handler crashed", { error: String(e) });
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: 500, status: "INTERNAL", message: "internal error; see the server log" } }));
  });
});
server.requestTimeout = 0; // long uploads are streamed by route handlers with their own limits
server.listen(c.port, process.env.HOST ?? "0.0.0.0", () => {
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : c.port;
  log.info("Obscura listening", { url: `http://localhost:${port}`, database: rt.kind, workers: c.workers, dataDir: c.dataDir });
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info("shutting down", { signal });
  server.close();
  await workers.stop().catch(() => {});
  await closeRuntime().catch(() => {});
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
