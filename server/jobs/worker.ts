/**
 * The worker: claims process jobs from the queue and runs the video or image pipeline, delivers
 * webhooks, and ends operations whose jobs died (dead-letter queue). Runs in the web server's
 * process (OBSCURA_WORKERS, default 1) or alone (`npm run worker`); any number of workers on any
 * number of machines share one queue, and each job runs once at a time.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import type { Job } from "pg-boss";
import { toObscuraError } from "@/lib/errors";
import type { VideoJobSpec } from "@/lib/api/video";
import type { ImageJobSpec } from "@/lib/api/image";
import { runtime, type Runtime } from "../db/client";
import { operations } from "../db/schema";
import { config } from "../config";
import { log } from "../log";
import { ensureQueues, QUEUE, type ProcessJob } from "./queues";
import { StagedProgress, throttle } from "./progress";
import { finishFailed, finishSucceeded, findOperation, isCancelRequested, setProgress } from "../operations/store";
import { deliverWebhook, notify, notifyCompletion, type WebhookJob } from "../notify/webhooks";
import { runVideoPipeline } from "../pipeline/video";
import { runImagePipeline } from "../pipeline/image";
import type { PipelineContext } from "../pipeline/context";
import { PIPELINE_DEAD_QUEUE, PIPELINE_QUEUE, endDeadPipeline, ensurePipelineQueues, runPipelineJob } from "../analytics/runs";

const workerName = `${os.hostname()}:${process.pid}`;

export interface Workers {
  stop(): Promise<void>;
}

export async function startWorkers(count: number): Promise<Workers> {
  const rt = await runtime();
  await ensureQueues(rt.boss);
  const ids: Array<readonly [string, string]> = [];
  if (count > 0) {
    ids.push(
      [QUEUE.process, await rt.boss.work<ProcessJob>(QUEUE.process, { localConcurrency: count, batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
        await runProcessJob(rt, job!);
      })],
      [QUEUE.webhook, await rt.boss.work<WebhookJob>(QUEUE.webhook, { localConcurrency: 4, batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
        await deliverWebhook(job!.data);
      })],
      [QUEUE.processDead, await rt.boss.work<ProcessJob>(QUEUE.processDead, { pollingIntervalSeconds: 2 }, async ([job]) => {
        await endDeadOperation(rt, job!.data.operationId);
      })],
    );
  }
  // analytics pipelines (docs/pipeline.md#rest): several per worker, long-running
  const perWorker = count > 0 ? config().pipelinesPerWorker : 0;
  if (perWorker > 0) {
    await ensurePipelineQueues(rt.boss);
    ids.push(
      [PIPELINE_QUEUE, await rt.boss.work<{ pipelineId: string }>(PIPELINE_QUEUE, { localConcurrency: perWorker, batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
        await runPipelineJob(rt, job!.data.pipelineId, workerName);
      })],
      [PIPELINE_DEAD_QUEUE, await rt.boss.work<{ pipelineId: string }>(PIPELINE_DEAD_QUEUE, { pollingIntervalSeconds: 2 }, async ([job]) => {
        await endDeadPipeline(rt, job!.data.pipelineId);
      })],
    );
  }
  log.info("workers started", { worker: workerName, concurrency: count });
  return {
    async stop() {
      for (const [name, id] of ids) await rt.boss.offWork(name, { id, wait: false }).catch(() => {});
    },
  };
}

/** A job whose retries all died with their workers: end its operation instead of leaving it pending. */
async function endDeadOperation(rt: Runtime, operationId: string): Promise<void> {
  const row = await findOperation(rt.db, operationId);
  if (!row || row.done) return;
  const ended = row.cancelRequested
    ? await finishFailed(rt.db, operationId, "CANCELLED", "cancelled by request")
    : await finishFailed(
        rt.db,
        operationId,
        "ABORTED",
        `the worker processing this operation stopped (killed or lost) on each of ${row.attempts} attempts; giving up`,
      );
  log.warn("operation abandoned by its workers", { operationId, attempts: row.attempts });
  if (ended) await notifyCompletion(rt.boss, ended).catch(() => {});
}

async function runProcessJob(rt: Runtime, job: Job<ProcessJob>): Promise<void> {
  const { operationId } = job.data;
  const row = await findOperation(rt.db, operationId);
  if (!row || row.done) return;
  if (row.cancelRequested) {
    const ended = await finishFailed(rt.db, operationId, "CANCELLED", "cancelled by request before processing started");
    if (ended) await notifyCompletion(rt.boss, ended).catch(() => {});
    return;
  }
  const firstAttempt = row.attempts === 0;
  const [claimed] = await rt.db
    .update(operations)
    .set({ status: "running", attempts: row.attempts + 1, worker: workerName, stage: "starting", updateTime: new Date() })
    .where(eq(operations.id, operationId))
    .returning();
  if (!claimed) return;
  log.info("operation started", { operationId, kind: row.kind, attempt: claimed.attempts, worker: workerName });
  if (firstAttempt) await notify(rt.boss, claimed, "START").catch((e) => log.warn("could not queue START webhook", { error: String(e) }));

  const controller = new AbortController();
  let cancelled = false;
  const cancelWatch = setInterval(() => {
    isCancelRequested(rt.db, operationId)
      .then((c) => {
        if (c && !cancelled) {
          cancelled = true;
          log.info("cancelling operation", { operationId });
          controller.abort(new Error("cancelled by request"));
        }
      })
      .catch(() => {});
  }, 1000);

  const saveProgress = throttle(1000, (percent: number, stage: string) => {
    setProgress(rt.db, operationId, percent, stage).catch((e) => log.warn("progress not saved", { error: String(e) }));
  });
  const progressHook = throttle(config().webhookProgressSeconds * 1000, (percent: number) => {
    findOperation(rt.db, operationId)
      .then((r) => (r && !r.done ? notify(rt.boss, { ...r, progressPercent: percent }, "PROGRESS") : 0))
      .catch(() => {});
  });
  let lastStage = "";
  const progress = (stages: ReadonlyArray<readonly [string, number]>) =>
    new StagedProgress(stages, (percent, stage) => {
      if (stage !== lastStage) {
        lastStage = stage;
        saveProgress.force(percent, stage);
      } else saveProgress(percent, stage);
      progressHook(percent);
    });

  const workDir = path.join(config().dataDir, "work", operationId);
  await fs.rm(workDir, { recursive: true, force: true });
  await fs.mkdir(workDir, { recursive: true });
  const ctx: PipelineContext = { db: rt.db, operation: claimed, signal: controller.signal, workDir, progress };
  try {
    const result =
      row.kind === "video"
        ? await runVideoPipeline(ctx, row.request as VideoJobSpec)
        : await runImagePipeline(ctx, row.request as ImageJobSpec);
    const ended = await finishSucceeded(rt.db, operationId, result);
    log.info("operation succeeded", { operationId });
    if (ended) await notifyCompletion(rt.boss, ended).catch(() => {});
  } catch (e) {
    const err = cancelled ? null : toObscuraError(e);
    const ended = err
      ? await finishFailed(rt.db, operationId, err.status, err.message)
      : await finishFailed(rt.db, operationId, "CANCELLED", "cancelled by request");
    if (err) log.warn("operation failed", { operationId, status: err.status, message: err.message });
    else log.info("operation cancelled", { operationId });
    if (ended) await notifyCompletion(rt.boss, ended).catch(() => {});
  } finally {
    clearInterval(cancelWatch);
    await fs.rm(workDir, { recursive: true, force: true }).catch(() => {});
  }
}
