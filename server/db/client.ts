/**
 * The process-wide database runtime: a drizzle client and a pg-boss instance over the same
 * database, either the embedded PGlite (default, data in OBSCURA_DATA_DIR/db) or the PostgreSQL
 * server named by DATABASE_URL. Migrations (drizzle/) are applied on first use.
 *
 * The runtime is kept on globalThis: Next.js bundles route handlers separately from the custom
 * server, and PGlite allows one open instance per data directory, so every bundle must share it.
 */
import fs from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePg, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { PgBoss, fromPglite } from "pg-boss";
import * as schema from "./schema";
import { config } from "../config";
import { log } from "../log";

/** Both drivers expose the same query builder; we type it as the node-postgres one. */
export type Db = NodePgDatabase<typeof schema>;

export interface Runtime {
  kind: "pglite" | "postgres";
  db: Db;
  boss: PgBoss;
  close(): Promise<void>;
}

const KEY = Symbol.for("obscura.runtime");
type Holder = { [KEY]?: Promise<Runtime> };

/** The shared runtime, created on first call. */
export function runtime(): Promise<Runtime> {
  const g = globalThis as Holder;
  g[KEY] ??= createRuntime().catch((e) => {
    delete g[KEY];
    throw e;
  });
  return g[KEY];
}

export async function db(): Promise<Db> {
  return (await runtime()).db;
}

/** Closes and forgets the shared runtime (tests, graceful shutdown). */
export async function closeRuntime(): Promise<void> {
  const g = globalThis as Holder;
  const p = g[KEY];
  delete g[KEY];
  if (p) await (await p).close();
}

const MIGRATION_LOCK = 0x0b5c0a; // advisory lock id so concurrent starts migrate once

function bossOptions() {
  const c = config();
  return {
    schema: "pgboss",
    superviseIntervalSeconds: c.superviseIntervalSeconds,
    monitorIntervalSeconds: c.superviseIntervalSeconds,
    maintenanceIntervalSeconds: Math.max(60, c.superviseIntervalSeconds),
  };
}

async function createRuntime(): Promise<Runtime> {
  const c = config();
  const migrationsFolder = path.join(c.appDir, "drizzle");
  if (!c.databaseUrl) {
    const dir = path.join(c.dataDir, "db");
    fs.mkdirSync(dir, { recursive: true });
    const client = new PGlite(dir);
    await client.waitReady;
    const db = drizzlePglite({ client, schema }) as unknown as Db;
    await migratePglite(db as never, { migrationsFolder });
    const boss = new PgBoss({ ...bossOptions(), db: fromPglite(client), backend: "pglite" });
    boss.on("error", (e) => log.error("queue error", { error: String(e) }));
    await boss.start();
    log.info("database ready", { kind: "pglite", dir });
    return {
      kind: "pglite",
      db,
      boss,
      async close() {
        await boss.stop({ graceful: false }).catch(() => {});
        await client.close().catch(() => {});
      },
    };
  }
  const pool = new pg.Pool({ connectionString: c.databaseUrl, max: 10 });
  pool.on("error", (e) => log.error("database pool error", { error: e.message }));
  const db = drizzlePg({ client: pool, schema });
  const lockClient = await pool.connect();
  try {
    await lockClient.query("select pg_advisory_lock($1)", [MIGRATION_LOCK]);
    await migratePg(drizzlePg({ client: lockClient, schema }), { migrationsFolder });
  } finally {
    await lockClient.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => {});
    lockClient.release();
  }
  const boss = new PgBoss({ ...bossOptions(), connectionString: c.databaseUrl, max: 5 });
  boss.on("error", (e) => log.error("queue error", { error: String(e) }));
  await boss.start();
  log.info("database ready", { kind: "postgres" });
  return {
    kind: "postgres",
    db,
    boss,
    async close() {
      await boss.stop({ graceful: false }).catch(() => {});
      await pool.end().catch(() => {});
    },
  };
}
