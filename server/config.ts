/**
 * Configuration, read from environment variables (all documented in README.md#configuration).
 * Read once per process through `config()`; tests may call `resetConfig()` after changing env.
 */
import path from "node:path";

export interface Config {
  port: number;
  dataDir: string;
  /** PostgreSQL connection string; null means the embedded PGlite database in dataDir/db. */
  databaseUrl: string | null;
  apiToken: string | null;
  workers: number;
  /** Analytics pipelines one worker process runs at once (OBSCURA_PIPELINES_PER_WORKER). */
  pipelinesPerWorker: number;
  /** Prefix URI holding the internal state of every session (file:// under dataDir by default). */
  stateUri: string;
  defaultProjectId: string;
  locationId: string;
  maxBodyBytes: number;
  jobHeartbeatSeconds: number;
  jobRetryLimit: number;
  jobExpireSeconds: number;
  superviseIntervalSeconds: number;
  webhookTimeoutSeconds: number;
  webhookRetryLimit: number;
  webhookProgressSeconds: number;
  /** Path of the Next.js app (where .next lives). */
  appDir: string;
  /** Directory of custom ONNX detectors (`*.json` manifests, docs/models.md); null: none. */
  modelsDir: string | null;
}

function intEnv(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}, got ${JSON.stringify(raw)}`);
  return n;
}

function toFileUri(dir: string): string {
  const abs = path.resolve(dir);
  return "file://" + abs.split(path.sep).map(encodeURIComponent).join("/") + "/";
}

let cached: Config | null = null;

export function config(): Config {
  if (cached) return cached;
  const appDir = path.resolve(/*turbopackIgnore: true*/ process.env.OBSCURA_APP_DIR ?? process.cwd());
  const dataDir = path.resolve(/*turbopackIgnore: true*/ appDir, process.env.OBSCURA_DATA_DIR || "./data");
  let stateUri = process.env.OBSCURA_STATE_URI || toFileUri(path.join(dataDir, "sessions"));
  if (!stateUri.endsWith("/")) stateUri += "/";
  cached = {
    port: intEnv("PORT", 9000, 0),
    dataDir,
    databaseUrl: process.env.DATABASE_URL || null,
    apiToken: process.env.OBSCURA_API_TOKEN || null,
    workers: intEnv("OBSCURA_WORKERS", 1, 0),
    pipelinesPerWorker: intEnv("OBSCURA_PIPELINES_PER_WORKER", 4, 0),
    stateUri,
    defaultProjectId: process.env.OBSCURA_DEFAULT_PROJECT_ID || "default",
    locationId: process.env.OBSCURA_LOCATION_ID || "local",
    maxBodyBytes: intEnv("OBSCURA_MAX_BODY_BYTES", 1024 * 1024, 1024),
    jobHeartbeatSeconds: intEnv("OBSCURA_JOB_HEARTBEAT_SECONDS", 30, 10),
    jobRetryLimit: intEnv("OBSCURA_JOB_RETRY_LIMIT", 2, 0),
    jobExpireSeconds: intEnv("OBSCURA_JOB_EXPIRE_SECONDS", 6 * 3600, 60),
    superviseIntervalSeconds: intEnv("OBSCURA_SUPERVISE_INTERVAL_SECONDS", 30, 1),
    webhookTimeoutSeconds: intEnv("OBSCURA_WEBHOOK_TIMEOUT_SECONDS", 10, 1),
    webhookRetryLimit: intEnv("OBSCURA_WEBHOOK_RETRY_LIMIT", 5, 0),
    webhookProgressSeconds: intEnv("OBSCURA_WEBHOOK_PROGRESS_SECONDS", 5, 0),
    appDir,
    modelsDir: process.env.OBSCURA_MODELS_DIR ? path.resolve(/*turbopackIgnore: true*/ appDir, process.env.OBSCURA_MODELS_DIR) : null,
  };
  return cached;
}

export function resetConfig(): void {
  cached = null;
}
