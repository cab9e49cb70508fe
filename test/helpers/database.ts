/**
 * Points this test process's own database runtime (server/db/client) at a database of the test's
 * choosing, for tests that call server code directly: the embedded PGlite in a fresh data dir, a
 * throwaway database on the PostgreSQL server, or one a started server also uses. Caches keyed on
 * the environment (config, bootstrap token, licence status) are reset both ways.
 */
import { afterAll, beforeAll } from "vitest";
import { resetConfig } from "@/server/config";
import { closeRuntime } from "@/server/db/client";
import { resetAuthCache } from "@/server/auth/bearer";
import { clearLicenseCache } from "@/server/license";
import { tempDir, tempPostgres } from "./server";

const resetCaches = () => {
  resetConfig();
  resetAuthCache();
  clearLicenseCache();
};

/**
 * Switches to `databaseUrl` (PostgreSQL) or, without one, a fresh PGlite under a temp dir named
 * after `prefix`, with `env` applied (undefined deletes a variable). Returns the way back.
 */
export async function switchDatabase(prefix: string, opts: { databaseUrl?: string; env?: Record<string, string | undefined> } = {}): Promise<() => Promise<void>> {
  const saved = { ...process.env };
  await closeRuntime();
  process.env.OBSCURA_DATA_DIR = tempDir(prefix);
  if (opts.databaseUrl) process.env.DATABASE_URL = opts.databaseUrl;
  else delete process.env.DATABASE_URL;
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetCaches();
  return async () => {
    await closeRuntime();
    process.env = saved;
    resetCaches();
  };
}

/** A fresh database for the enclosing describe block: PGlite, or a throwaway PostgreSQL database with `pg`. */
export function useFreshDatabase(prefix: string, opts: { pg?: boolean; env?: Record<string, string | undefined> } = {}): void {
  let restore: (() => Promise<void>) | null = null;
  let drop: (() => Promise<void>) | null = null;
  beforeAll(async () => {
    let databaseUrl: string | undefined;
    if (opts.pg) {
      const t = await tempPostgres();
      databaseUrl = t.url;
      drop = t.drop;
    }
    restore = await switchDatabase(prefix, { databaseUrl, env: opts.env });
  });
  afterAll(async () => {
    await restore?.();
    await drop?.();
  });
}
