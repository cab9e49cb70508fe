/** GET and DELETE of an operation (DELETE semantics: docs/operations.md). */
import { and, eq } from "drizzle-orm";
import { runtime } from "../db/client";
import { operations } from "../db/schema";
import { QUEUE } from "../jobs/queues";
import { presentOperation } from "./present";
import { finishFailed, operationByName } from "./store";
import { notifyCompletion } from "../notify/webhooks";
import type { Operation } from "@/lib/api/operation";
import { log } from "../log";

export async function getOperation(name: string): Promise<Operation> {
  const rt = await runtime();
  return presentOperation(await operationByName(rt.db, name));
}

export type DeleteResult =
  | { kind: "cancelled"; operation: Operation } // was queued: ended at once
  | { kind: "cancelling"; operation: Operation } // running: the worker stops within seconds
  | { kind: "removed" };

/**
 * DELETE: a pending operation is cancelled (it ends failed with code 1 CANCELLED); a finished
 * operation is removed (GET then answers 404). Session state is never touched (use STATE_DROP).
 */
export async function deleteOperation(name: string): Promise<DeleteResult> {
  const rt = await runtime();
  const row = await operationByName(rt.db, name);
  if (row.done) {
    await rt.db.delete(operations).where(eq(operations.id, row.id));
    log.info("operation removed", { operationId: row.id });
    return { kind: "removed" };
  }
  await rt.db
    .update(operations)
    .set({ cancelRequested: true, updateTime: new Date() })
    .where(and(eq(operations.id, row.id), eq(operations.done, false)));
  log.info("operation cancel requested", { operationId: row.id, status: row.status });
  if (row.status === "queued") {
    // Not claimed by a worker yet: withdraw the job and end the operation now.
    if (row.jobId) await rt.boss.cancel(QUEUE.process, row.jobId).catch(() => {});
    const ended = await finishFailed(rt.db, row.id, "CANCELLED", "cancelled by request before processing started");
    if (ended) {
      await notifyCompletion(rt.boss, ended).catch(() => {});
      return { kind: "cancelled", operation: presentOperation(ended) };
    }
  }
  const current = await operationByName(rt.db, name);
  return current.done ? { kind: "cancelled", operation: presentOperation(current) } : { kind: "cancelling", operation: presentOperation(current) };
}
