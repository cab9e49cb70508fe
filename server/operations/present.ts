/** Turns an operation row into the public Operation object of the spec. */
import { PROCESS_RESPONSE_TYPE, PROGRESS_TYPE, formatOperationName, type Operation } from "@/lib/api/operation";
import { config } from "../config";
import { redactUri } from "@/lib/storage-uri";
import type { OperationRow } from "../db/schema";
import type { LeakSummary } from "../pipeline/leak-check";

export function operationName(row: Pick<OperationRow, "projectId" | "id">): string {
  return formatOperationName({ projectId: row.projectId, locationId: config().locationId, operationId: row.id });
}

export function presentOperation(row: OperationRow): Operation {
  const op: Operation = {
    name: operationName(row),
    metadata: {
      "@type": PROGRESS_TYPE,
      progress: {
        inputUri: redactUri(row.inputUri),
        progressPercent: Math.round(row.progressPercent * 10) / 10,
        startTime: row.startTime.toISOString(),
        updateTime: row.updateTime.toISOString(),
      },
    },
    done: row.done,
  };
  if (row.done && row.status === "succeeded" && row.response) {
    const r = row.response as { outputUri: string; leakCheck?: LeakSummary };
    const leaks = r.leakCheck
      ? { leakCount: r.leakCheck.leakCount, leakCheck: { framesScanned: r.leakCheck.framesScanned, dismissedCount: r.leakCheck.dismissedCount ?? 0, threshold: r.leakCheck.threshold, features: r.leakCheck.features } }
      : {};
    op.response = { "@type": PROCESS_RESPONSE_TYPE, processResults: { outputUri: redactUri(r.outputUri), ...leaks } };
  }
  if (row.done && row.status === "failed") {
    const e = (row.error ?? { code: 13, message: "failed" }) as { code: number; message: string };
    op.error = { code: e.code, message: e.message };
  }
  return op;
}
