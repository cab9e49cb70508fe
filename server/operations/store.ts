/** Reads and writes of operation rows used by the API and the worker. */
import { and, eq } from "drizzle-orm";
import { ObscuraError, type ErrorStatus, ErrorCode } from "@/lib/errors";
import { parseOperationName } from "@/lib/api/operation";
import { operations, type OperationRow } from "../db/schema";
import type { Db } from "../db/client";
import type { PipelineResult } from "../pipeline/context";
import { config } from "../config";
import { redactUri } from "@/lib/storage-uri";

/** A finished operation keeps no secrets: SAS signatures and tokens in its URIs are replaced. */
function scrubbedRequest(request: unknown): unknown {
  const r = structuredClone(request) as { inputUri?: string; outputUri?: string | null; notifications?: { uri: string }[] };
  if (r.inputUri) r.inputUri = redactUri(r.inputUri);
  if (r.outputUri) r.outputUri = redactUri(r.outputUri);
  for (const n of r.notifications ?? []) n.uri = redactUri(n.uri);
  return r;
}

async function scrubSecrets(db: Db, row: OperationRow | undefined): Promise<OperationRow | null> {
  if (!row) return null;
  const [scrubbed] = await db
    .update(operations)
    .set({ request: scrubbedRequest(row.request), inputUri: redactUri(row.inputUri), outputUri: row.outputUri ? redactUri(row.outputUri) : null })
    .where(eq(operations.id, row.id))
    .returning();
  return scrubbed ?? row;
}

export async function findOperation(db: Db, id: string): Promise<OperationRow | null> {
  const rows = await db.select().from(operations).where(eq(operations.id, id)).limit(1);
  return rows[0] ?? null;
}

/** The row named by a full operation name, or NOT_FOUND. */
export async function operationByName(db: Db, name: string): Promise<OperationRow> {
  const parsed = parseOperationName(name);
  const notFound = () => new ObscuraError("NOT_FOUND", `operation ${JSON.stringify(name)} not found`);
  if (!parsed || parsed.locationId !== config().locationId) throw notFound();
  const row = await findOperation(db, parsed.operationId);
  if (!row || row.projectId !== parsed.projectId) throw notFound();
  return row;
}

export async function setProgress(db: Db, id: string, percent: number, stage?: string): Promise<void> {
  await db
    .update(operations)
    .set({ progressPercent: Math.max(0, Math.min(99.9, percent)), updateTime: new Date(), ...(stage ? { stage } : {}) })
    .where(and(eq(operations.id, id), eq(operations.done, false)));
}

/** Marks the operation succeeded with the pipeline's result as its response (null/absent parts left out). */
export async function finishSucceeded(db: Db, id: string, result: PipelineResult): Promise<OperationRow | null> {
  const response = Object.fromEntries(Object.entries(result).filter(([, v]) => v !== null && v !== undefined));
  const rows = await db
    .update(operations)
    .set({ status: "succeeded", done: true, progressPercent: 100, stage: "done", updateTime: new Date(), response, error: null })
    .where(and(eq(operations.id, id), eq(operations.done, false)))
    .returning();
  return scrubSecrets(db, rows[0]);
}

export async function finishFailed(db: Db, id: string, status: ErrorStatus, message: string): Promise<OperationRow | null> {
  const rows = await db
    .update(operations)
    .set({ status: "failed", done: true, stage: "failed", updateTime: new Date(), error: { code: ErrorCode[status], status, message } })
    .where(and(eq(operations.id, id), eq(operations.done, false)))
    .returning();
  return scrubSecrets(db, rows[0]);
}

export async function isCancelRequested(db: Db, id: string): Promise<boolean> {
  const rows = await db.select({ c: operations.cancelRequested }).from(operations).where(eq(operations.id, id)).limit(1);
  return rows[0]?.c ?? true;
}
