/** Turns an operation row into the public Operation object of the spec. */
import { PROCESS_RESPONSE_TYPE, PROGRESS_TYPE, formatOperationName, type Operation } from "@/lib/api/operation";
import { config } from "../config";
import { redactUri } from "@/lib/storage-uri";
import type { OperationRow } from "../db/schema";
import type { PipelineResult } from "../pipeline/context";

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
    const r = row.response as PipelineResult;
    const leaks = r.leakCheck
      ? { leakCount: r.leakCheck.leakCount, leakCheck: { framesScanned: r.leakCheck.framesScanned, dismissedCount: r.leakCheck.dismissedCount ?? 0, threshold: r.leakCheck.threshold, features: r.leakCheck.features } }
      : {};
    const t = r.transcript;
    const transcript = t ? { transcript: { languageCode: t.languageCode, engine: t.engine, segmentCount: t.segmentCount, jsonUri: redactUri(t.jsonUri), vttUri: redactUri(t.vttUri) } } : {};
    const hashes = r.exportHashes && Object.keys(r.exportHashes).length ? { exportHashes: r.exportHashes } : {};
    op.response = { "@type": PROCESS_RESPONSE_TYPE, processResults: { outputUri: redactUri(r.outputUri), ...hashes, ...leaks, ...transcript } };
  }
  if (row.done && row.status === "failed") {
    const e = (row.error ?? { code: 13, message: "failed" }) as { code: number; message: string };
    op.error = { code: e.code, message: e.message };
  }
  return op;
}
