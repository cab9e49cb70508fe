/** The audit log: sign-ins and admin actions, newest first in /admin/audit. Never holds secrets. */
import crypto from "node:crypto";
import { desc, lt } from "drizzle-orm";
import { db as database, type Db } from "../db/client";
import { auditLog } from "../db/schema";

export interface AuditEntry {
  actor?: string | null;
  action: string;
  target?: string | null;
  ip?: string | null;
  details?: Record<string, unknown> | null;
}

/** Who did something and from where, as the identity functions take it. */
export interface Actor {
  username: string;
  ip?: string;
}

/** Records an entry (inside a transaction when given one). */
export async function audit(entry: AuditEntry, d?: Pick<Db, "insert">): Promise<void> {
  const x = d ?? (await database());
  await x.insert(auditLog).values({
    id: crypto.randomUUID(),
    actor: entry.actor ?? "system",
    action: entry.action,
    target: entry.target ?? null,
    ip: entry.ip ?? null,
    details: entry.details ?? null,
  });
}

export async function listAudit(opts: { limit?: number; before?: Date } = {}) {
  const x = await database();
  const limit = Math.min(Math.max(1, opts.limit ?? 100), 1000);
  const q = x.select().from(auditLog);
  return (opts.before ? q.where(lt(auditLog.at, opts.before)) : q).orderBy(desc(auditLog.at), desc(auditLog.id)).limit(limit);
}
