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

// The vehicle annotation API's parameters (OBSCURA_VEHICLE_CONFIG): a bad file stops the start here.
{
  const { loadConfiguration } = await import("../server/vehicle/service");
  try {
    loadConfiguration();
  } catch (e) {
    log.error("vehicle annotation configuration refused", { error: (e as Error).message });
    process.exit(1);
  }
}
// Requests forwarded by the compatibility listeners carry this secret (server/vehicle/http.ts).
process.env.OBSCURA_LISTENER_SECRET = (await import("node:crypto")).randomBytes(24).toString("hex");

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
const { LISTENER_HEADER, LISTENER_SECRET_HEADER } = await import("../server/vehicle/http");
function serve(req: http.IncomingMessage, res: http.ServerResponse) {
  stampClientAddress(req);
  res.setHeader("Content-Security-Policy", framePolicy);
  handle(req, res).catch((e: unknown) => {
    log.error("request handler crashed", { error: String(e) });
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: 500, status: "INTERNAL", message: "internal error; see the server log" } }));
  });
}
/** Sets (listener) or removes (main port: nobody may claim a listener) the listener marks. */
function markListener(req: http.IncomingMessage, listener: string | null) {
  const marks = [LISTENER_HEADER, LISTENER_SECRET_HEADER];
  for (const h of marks) delete req.headers[h];
  for (let i = req.rawHeaders.length - 2; i >= 0; i -= 2) if (marks.includes(req.rawHeaders[i]!.toLowerCase())) req.rawHeaders.splice(i, 2);
  if (listener) {
    req.headers[LISTENER_HEADER] = listener;
    req.headers[LISTENER_SECRET_HEADER] = process.env.OBSCURA_LISTENER_SECRET!;
    req.rawHeaders.push(LISTENER_HEADER, listener, LISTENER_SECRET_HEADER, process.env.OBSCURA_LISTENER_SECRET!);
  }
}
const server = http.createServer((req, res) => {
  markListener(req, null);
  serve(req, res);
});
// Compatibility listeners (docs/vehicle-api.md): keyless, each serving one API's paths only.
const compat = [
  { name: "gateway", env: "OBSCURA_GATEWAY_PORT", prefix: "/v11/" },
  { name: "legacy", env: "OBSCURA_LEGACY_PORT", prefix: "/vehicle/" },
].flatMap(({ name, env, prefix }) => {
  const raw = process.env[env];
  if (!raw) return [];
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    log.error(`${env} must be a port number (0-65535)`, { got: raw });
    process.exit(1);
  }
  const s = http.createServer((req, res) => {
    if (!(req.url ?? "").startsWith(prefix)) {
      res.writeHead(404, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify({ error: { code: 404, status: "NOT_FOUND", message: `the ${name} listener serves only ${prefix}*` } }));
      return;
    }
    markListener(req, name);
    serve(req, res);
  });
  s.listen(port, process.env.HOST ?? "0.0.0.0", () => {
    const a = s.address();
    log.info(`${name} compatibility listener`, { port: typeof a === "object" && a ? a.port : port, paths: prefix + "*", key: "none" });
  });
  return [s];
});
server.requestTimeout = 0; // long uploads are streamed by route handlers with their own limits
server.listen(c.port, process.env.HOST ?? "0.0.0.0", () => {
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : c.port;
  log.info("Obscura listening", { url: `http://localhost:${port}`, database: rt.kind, workers: c.workers, dataDir: c.dataDir });
  // Load the vehicle models and run the initial health test now, not on the first request.
  if (process.env.OBSCURA_VEHICLE_WARMUP !== "lazy") {
    const host = typeof addr === "object" && addr && !["0.0.0.0", "::"].includes(addr.address) ? addr.address : "127.0.0.1";
    fetch(`http://${host.includes(":") ? `[${host}]` : host}:${port}/v11/health`).catch((e: unknown) => log.warn("vehicle warm-up not started", { error: String(e) }));
  }
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info("shutting down", { signal });
  server.close();
  for (const s of compat) s.close();
  await workers.stop().catch(() => {});
  await closeRuntime().catch(() => {});
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
