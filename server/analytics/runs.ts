/**
 * Pipelines over REST (docs/pipeline.md#rest): a row per pipeline in `pipelines`, a pg-boss job per
 * run in the queue `obscura-pipeline`. Any worker process (`npm start`'s in-process one, any number
 * of `npm run worker`) claims jobs, OBSCURA_PIPELINES_PER_WORKER at once. Stop requests are read by
 * the running worker every second. A worker that dies stops sending heartbeats: its job is retried
 * (the pipeline starts again elsewhere) up to OBSCURA_JOB_RETRY_LIMIT times, then the pipeline is
 * FAILED. A pg-boss job may last 24 hours at most, so a pipeline still running after 23 hours ends
 * its job and queues the next one (a restart of the source, the stream's ids start afresh).
 *
 * States: QUEUED -> RUNNING -> SUCCEEDED (the source ended) | STOPPED (stop requested) | FAILED;
 * STOPPING while a running pipeline winds down.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { and, desc, eq, inArray } from "drizzle-orm";
import type { PgBoss } from "pg-boss";
import YAML from "yaml";
import { ObscuraError } from "@/lib/errors";
import type { Principal } from "../auth/bearer";
import { config as serverConfig } from "../config";
import { runtime, type Runtime } from "../db/client";
import { pipelines } from "../db/schema";
import { queueMaker } from "../jobs/queues";
import { log } from "../log";
import { pipelineConfig, redactedConfig } from "./config";
import { parseBoxFilters } from "./filters";
import { parseSensors } from "./sensors";

export const PIPELINE_QUEUE = "obscura-pipeline";
export const PIPELINE_DEAD_QUEUE = "obscura-pipeline-dead";
export const STATES = ["QUEUED", "RUNNING", "STOPPING", "STOPPED", "SUCCEEDED", "FAILED"] as const;
export type PipelineState = (typeof STATES)[number];
const ACTIVE: PipelineState[] = ["QUEUED", "RUNNING", "STOPPING"];
/** A job hands over to the next one before pg-boss's 24-hour limit. */
const JOB_HOURS = 23;

type Row = typeof pipelines.$inferSelect;

export function resource(r: Row) {
  return {
    id: r.id,
    name: r.name,
    state: r.state,
    entryPoint: r.entryPoint,
    config: redactedConfig(r.config),
    stats: r.stats,
    error: r.error,
    worker: r.worker,
    attempts: r.attempts,
    createTime: r.createTime.toISOString(),
    startTime: r.startTime?.toISOString() ?? null,
    endTime: r.endTime?.toISOString() ?? null,
    updateTime: r.updateTime.toISOString(),
  };
}

const ensured = new WeakSet<PgBoss>();
export async function ensurePipelineQueues(boss: PgBoss): Promise<void> {
  if (ensured.has(boss)) return;
  const c = serverConfig();
  const create = await queueMaker(boss);
  await create(PIPELINE_DEAD_QUEUE, { retryLimit: 0, expireInSeconds: 300 });
  await create(PIPELINE_QUEUE, { retryLimit: c.jobRetryLimit, retryDelay: 2, expireInSeconds: 24 * 3600, heartbeatSeconds: c.jobHeartbeatSeconds, deadLetter: PIPELINE_DEAD_QUEUE });
  ensured.add(boss);
}

/** Checks what can be checked without running (parameters, sensors, filters); the worker checks the rest as it starts. */
function check(config: Record<string, unknown>): string {
  const c = pipelineConfig(config, { where: "config" });
  if (c.source === "direct") throw new ObscuraError("INVALID_ARGUMENT", "config.entryPoint: Direct runs inside your own program (docs/pipeline.md#direct); a REST pipeline reads File, RTSP, FolderWatch or ImageLoop");
  if (c.sensorsConfigFile && typeof c.sensorsConfigFile === "object") parseSensors(c.sensorsConfigFile, "config.sensorsConfigFile");
  parseBoxFilters(c.boxFilterConfig, "config.boxFilterConfig");
  return c.entryPoint;
}

/** The request body: {name?, config: {...}} as JSON, or the configuration itself as YAML. */
export function parseCreate(body: unknown): { name: string; config: Record<string, unknown> } {
  let b = body;
  if (typeof body === "string") {
    try {
      b = { config: YAML.parse(body) };
    } catch (e) {
      throw new ObscuraError("INVALID_ARGUMENT", `the body is not valid YAML: ${(e as Error).message}`);
    }
  }
  if (!b || typeof b !== "object" || Array.isArray(b)) throw new ObscuraError("INVALID_ARGUMENT", 'the body must be {"name": "...", "config": {pipeline parameters}} (or the configuration as YAML)');
  const { name, config, ...rest } = b as { name?: unknown; config?: unknown };
  const extra = Object.keys(rest);
  if (extra.length) throw new ObscuraError("INVALID_ARGUMENT", `${extra.join(", ")}: not a field of a pipeline request; send name and config (the pipeline parameters go inside config)`, { details: extra.map((f) => ({ field: f, problem: "unknown field" })) });
  if (!config || typeof config !== "object" || Array.isArray(config)) throw new ObscuraError("INVALID_ARGUMENT", "config is required: an object of pipeline parameters (docs/pipeline.md)", { details: [{ field: "config", problem: "is required" }] });
  if (name !== undefined && (typeof name !== "string" || name.length > 200)) throw new ObscuraError("INVALID_ARGUMENT", "name must be a string of at most 200 characters", { details: [{ field: "name", problem: "must be a string" }] });
  return { name: (name as string | undefined) ?? "", config: config as Record<string, unknown> };
}

/** Pipelines read files and folders of the server's machine: admins and API tokens only. */
export function assertMayRun(p: Principal): void {
  if (p.scope) throw new ObscuraError("PERMISSION_DENIED", "embed tokens cannot run analytics pipelines");
  if (p.kind === "user" && p.role !== "admin") throw new ObscuraError("PERMISSION_DENIED", "only administrators and API tokens may run analytics pipelines (they read the server's files and cameras)");
}

export async function createPipeline(p: Principal, body: unknown): Promise<ReturnType<typeof resource>> {
  assertMayRun(p);
  const { name, config } = parseCreate(body);
  const entryPoint = check(config);
  const rt = await runtime();
  await ensurePipelineQueues(rt.boss);
  const now = new Date();
  const id = crypto.randomUUID();
  const [row] = await rt.db.insert(pipelines).values({ id, name: name || `${entryPoint} ${String(config.sourceId ?? "lpr-1")}`, owner: p.id, state: "QUEUED", entryPoint, config, createTime: now, updateTime: now }).returning();
  await rt.boss.send(PIPELINE_QUEUE, { pipelineId: id });
  log.info("pipeline queued", { pipelineId: id, entryPoint });
  return resource(row!);
}

export async function listPipelines(p: Principal, state: string | null): Promise<{ pipelines: ReturnType<typeof resource>[] }> {
  assertMayRun(p);
  if (state && !STATES.includes(state as PipelineState)) throw new ObscuraError("INVALID_ARGUMENT", `state ${JSON.stringify(state)} must be one of ${STATES.join(", ")}`, { details: [{ field: "state", problem: "unknown state" }] });
  const rt = await runtime();
  const rows = await rt.db.select().from(pipelines).where(state ? eq(pipelines.state, state) : undefined).orderBy(desc(pipelines.createTime)).limit(1000);
  return { pipelines: rows.map(resource) };
}

export async function getPipeline(p: Principal, id: string): Promise<ReturnType<typeof resource>> {
  assertMayRun(p);
  const rt = await runtime();
  const [row] = await rt.db.select().from(pipelines).where(eq(pipelines.id, id));
  if (!row) throw new ObscuraError("NOT_FOUND", `no pipeline ${id}`);
  return resource(row);
}

/** Stops a pipeline: a queued one at once, a running one within a second or two (STOPPING until then). */
export async function stopPipeline(p: Principal, id: string): Promise<ReturnType<typeof resource>> {
  assertMayRun(p);
  const rt = await runtime();
  const now = new Date();
  const [queued] = await rt.db.update(pipelines).set({ state: "STOPPED", stopRequested: true, endTime: now, updateTime: now }).where(and(eq(pipelines.id, id), eq(pipelines.state, "QUEUED"))).returning();
  if (queued) return resource(queued);
  const [running] = await rt.db.update(pipelines).set({ state: "STOPPING", stopRequested: true, updateTime: now }).where(and(eq(pipelines.id, id), inArray(pipelines.state, ["RUNNING", "STOPPING"]))).returning();
  if (running) return resource(running);
  return getPipeline(p, id); // already ended: stopping is a no-op
}

// ---------------------------------------------------------------------------------------------
// The worker side

async function finish(rt: Runtime, id: string, state: PipelineState, error: string | null, stats: Record<string, unknown> | null): Promise<void> {
  const now = new Date();
  await rt.db
    .update(pipelines)
    .set({ state, error, endTime: now, updateTime: now, ...(stats ? { stats } : {}) })
    .where(eq(pipelines.id, id));
}

/** Runs one job of a pipeline (called by the worker). */
export async function runPipelineJob(rt: Runtime, pipelineId: string, worker: string): Promise<void> {
  const [row] = await rt.db.select().from(pipelines).where(eq(pipelines.id, pipelineId));
  if (!row || !ACTIVE.includes(row.state as PipelineState)) return;
  if (row.stopRequested) {
    await finish(rt, pipelineId, "STOPPED", null, null);
    return;
  }
  const now = new Date();
  await rt.db.update(pipelines).set({ state: "RUNNING", worker, attempts: row.attempts + 1, startTime: row.startTime ?? now, updateTime: now, error: null }).where(eq(pipelines.id, pipelineId));
  // extension modules get a configuration file to read: the pipeline's own, written for them
  const dir = path.join(serverConfig().dataDir, "pipelines");
  fs.mkdirSync(dir, { recursive: true });
  const configPath = path.join(dir, `${pipelineId}.yaml`);
  fs.writeFileSync(configPath, YAML.stringify(row.config), { mode: 0o600 });
  const { Pipeline } = await import("./pipeline");
  const controller = new AbortController();
  let stopped = false;
  let handOver = false;
  let pipeline: Awaited<ReturnType<typeof Pipeline.create>> | null = null;
  const save = async () => {
    const [r] = await rt.db
      .update(pipelines)
      .set({ ...(pipeline ? { stats: pipeline.status() as unknown as Record<string, unknown> } : {}), updateTime: new Date() })
      .where(eq(pipelines.id, pipelineId))
      .returning({ stop: pipelines.stopRequested });
    if (r?.stop && !stopped) {
      stopped = true;
      controller.abort(new Error("stopped by request"));
    }
  };
  const timer = setInterval(() => void save().catch((e) => log.warn("pipeline status not saved", { pipelineId, error: String(e) })), 1000);
  const limit = setTimeout(() => {
    handOver = true;
    controller.abort(new Error("job time limit: handing over"));
  }, JOB_HOURS * 3600 * 1000);
  try {
    pipeline = await Pipeline.create(row.config, { where: "config", configPath });
    log.info("pipeline started", { pipelineId, entryPoint: row.entryPoint, worker });
    const stats = await pipeline.run(controller.signal);
    clearInterval(timer);
    await save().catch(() => {});
    if (handOver && !stopped) {
      await rt.db.update(pipelines).set({ state: "QUEUED", updateTime: new Date() }).where(eq(pipelines.id, pipelineId));
      await rt.boss.send(PIPELINE_QUEUE, { pipelineId });
      return;
    }
    await finish(rt, pipelineId, stopped ? "STOPPED" : "SUCCEEDED", null, stats as unknown as Record<string, unknown>);
    log.info(stopped ? "pipeline stopped" : "pipeline finished", { pipelineId, frames: stats.framesAnalysed, events: stats.events });
  } catch (e) {
    clearInterval(timer);
    const msg = (e as Error).message;
    await finish(rt, pipelineId, "FAILED", msg, pipeline ? (pipeline.status() as unknown as Record<string, unknown>) : null);
    log.warn("pipeline failed", { pipelineId, error: msg });
  } finally {
    clearInterval(timer);
    clearTimeout(limit);
    fs.rmSync(configPath, { force: true });
  }
}

/** A pipeline whose jobs all died with their workers. */
export async function endDeadPipeline(rt: Runtime, pipelineId: string): Promise<void> {
  const [row] = await rt.db.select().from(pipelines).where(eq(pipelines.id, pipelineId));
  if (!row || !ACTIVE.includes(row.state as PipelineState)) return;
  await finish(rt, pipelineId, row.stopRequested ? "STOPPED" : "FAILED", row.stopRequested ? null : `the worker running this pipeline stopped (killed or lost) on each of ${row.attempts} attempts; giving up`, null);
  log.warn("pipeline abandoned by its workers", { pipelineId, attempts: row.attempts });
}


