/** What a pipeline gets from the worker. */
import type { Db } from "../db/client";
import type { OperationRow } from "../db/schema";
import type { StagedProgress } from "../jobs/progress";
import type { LeakSummary } from "./leak-check";

/** What a pipeline ends with: where the output is, the leak check's summary and the transcript's files when they ran. */
export interface PipelineResult {
  outputUri: string;
  leakCheck?: LeakSummary | null;
  transcript?: { languageCode: string; engine: string; segmentCount: number; jsonUri: string; vttUri: string } | null;
  /** renderConfig.exportHashes of the file just rendered (also in the state's hashes.json). */
  exportHashes?: Record<string, string> | null;
}

export interface PipelineContext {
  db: Db;
  operation: OperationRow;
  /** Aborted when the operation is cancelled; pass it to every I/O and ffmpeg call. */
  signal: AbortSignal;
  /** A scratch directory of this operation, removed afterwards. */
  workDir: string;
  /** Declares the pipeline's stages (name, weight) and returns the reporter. */
  progress(stages: ReadonlyArray<readonly [string, number]>): StagedProgress;
}
