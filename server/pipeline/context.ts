/** What a pipeline gets from the worker. */
import type { Db } from "../db/client";
import type { OperationRow } from "../db/schema";
import type { StagedProgress } from "../jobs/progress";

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
