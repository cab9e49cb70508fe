/**
 * Webhook notifications (docs/webhooks.md). Each notification is its own job on the `webhook`
 * queue, so a slow or dead receiver never slows or fails the processing job: a delivery has a
 * timeout per attempt (OBSCURA_WEBHOOK_TIMEOUT_SECONDS) and is retried with exponential backoff
 * (OBSCURA_WEBHOOK_RETRY_LIMIT times). Receiver URLs are logged by origin only.
 */
import crypto from "node:crypto";
import type { PgBoss } from "pg-boss";
import type { NotificationEvent } from "@/lib/api/common";
import type { Operation } from "@/lib/api/operation";
import type { OperationRow } from "../db/schema";
import { config } from "../config";
import { ensureQueues, QUEUE } from "../jobs/queues";
import { presentOperation } from "../operations/present";
import { log } from "../log";

export interface WebhookBody {
  event: NotificationEvent;
  eventTime: string;
  deliveryId: string;
  name: string;
  tag: Record<string, unknown> | null;
  operation: Operation;
}

export interface WebhookJob {
  uri: string;
  body: WebhookBody;
}

interface NotificationSpec {
  notifications?: { uri: string; events: string[] }[];
  tag?: Record<string, unknown> | null;
}

/** Queues one delivery per notification of the operation that asked for `event`. */
export async function notify(boss: PgBoss, row: OperationRow, event: NotificationEvent): Promise<number> {
  const spec = row.request as NotificationSpec;
  const targets = (spec.notifications ?? []).filter((n) => n.events.includes(event));
  if (!targets.length) return 0;
  await ensureQueues(boss);
  const operation = presentOperation(row);
  for (const t of targets) {
    const body: WebhookBody = {
      event,
      eventTime: new Date().toISOString(),
      deliveryId: crypto.randomUUID(),
      name: operation.name,
      tag: spec.tag ?? null,
      operation,
    };
    await boss.send(QUEUE.webhook, { uri: t.uri, body } satisfies WebhookJob);
  }
  return targets.length;
}

export function notifyCompletion(boss: PgBoss, row: OperationRow): Promise<number> {
  return notify(boss, row, "COMPLETION");
}

function origin(uri: string): string {
  try {
    return new URL(uri).origin;
  } catch {
    return "(invalid url)";
  }
}

/** One delivery attempt; throws (so the queue retries) on a network error, timeout or non-2xx. */
export async function deliverWebhook(job: WebhookJob): Promise<void> {
  const timeoutMs = config().webhookTimeoutSeconds * 1000;
  const started = Date.now();
  let res: Response;
  try {
    res = await fetch(job.uri, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "Obscura-Webhook/1",
        "x-obscura-event": job.body.event,
        "x-obscura-delivery": job.body.deliveryId,
      },
      body: JSON.stringify(job.body),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "manual",
    });
    await res.arrayBuffer().catch(() => {});
  } catch (e) {
    const reason = (e as Error).name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : (e as Error).message;
    log.warn("webhook delivery failed", { to: origin(job.uri), event: job.body.event, reason });
    throw new Error(`webhook to ${origin(job.uri)} failed: ${reason}`);
  }
  if (res.status < 200 || res.status >= 300) {
    log.warn("webhook delivery refused", { to: origin(job.uri), event: job.body.event, status: res.status });
    throw new Error(`webhook to ${origin(job.uri)} answered HTTP ${res.status}`);
  }
  log.debug("webhook delivered", { to: origin(job.uri), event: job.body.event, ms: Date.now() - started });
}
