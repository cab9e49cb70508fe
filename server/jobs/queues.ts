/**
 * The pg-boss queues. `process` carries one job per operation; a job whose worker stops sending
 * heartbeats (killed, machine lost) is retried up to OBSCURA_JOB_RETRY_LIMIT times and then moved to
 * `process-dead`, whose handler ends the operation failed. `webhook` carries one job per
 * notification delivery, retried with exponential backoff.
 */
import type { PgBoss } from "pg-boss";
import { config } from "../config";

export const QUEUE = {
  process: "obscura-process",
  processDead: "obscura-process-dead",
  webhook: "obscura-webhook",
} as const;

export interface ProcessJob {
  operationId: string;
}

const ensured = new WeakSet<PgBoss>();

/** A function that creates a queue, or updates its options when it exists (nodes starting together may race: fine). */
export async function queueMaker(boss: PgBoss): Promise<(name: string, options: Parameters<PgBoss["createQueue"]>[1]) => Promise<void>> {
  const existing = new Set((await boss.getQueues()).map((q) => q.name));
  return async (name, options) => {
    if (existing.has(name)) await boss.updateQueue(name, options as never);
    else
      await boss.createQueue(name, options).catch(async (e) => {
        // another node created it between our check and now
        if (!(await boss.getQueue(name))) throw e;
      });
  };
}

export async function ensureQueues(boss: PgBoss): Promise<void> {
  if (ensured.has(boss)) return;
  const c = config();
  const create = await queueMaker(boss);
  await create(QUEUE.processDead, { retryLimit: 0, expireInSeconds: 300 });
  await create(QUEUE.process, {
    retryLimit: c.jobRetryLimit,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: c.jobExpireSeconds,
    heartbeatSeconds: c.jobHeartbeatSeconds,
    deadLetter: QUEUE.processDead,
  });
  await create(QUEUE.webhook, {
    retryLimit: c.webhookRetryLimit,
    retryDelay: 1,
    retryBackoff: true,
    retryDelayMax: 300,
    expireInSeconds: Math.max(30, c.webhookTimeoutSeconds * 3),
    // delivery jobs carry receiver URLs, which may hold tokens: keep them no longer than needed
    deleteAfterSeconds: 3600,
    retentionSeconds: 86400,
  });
  ensured.add(boss);
}

export async function enqueueProcess(boss: PgBoss, job: ProcessJob): Promise<string> {
  await ensureQueues(boss);
  const id = await boss.send(QUEUE.process, job);
  if (!id) throw new Error("the job queue refused the job");
  return id;
}
