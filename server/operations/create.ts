/** POST videos:process / images:process: validate, record the operation, enqueue its job. */
import crypto from "node:crypto";
import { eq } from "drizzle-orm";
import { ObscuraError } from "@/lib/errors";
import { parseBody } from "@/lib/api/parse";
import { videoJobSpec, videoProcessRequestSchema } from "@/lib/api/video";
import { imageJobSpec, imageProcessRequestSchema } from "@/lib/api/image";
import { runtime } from "../db/client";
import { operations, sessions } from "../db/schema";
import { config } from "../config";
import { enqueueProcess } from "../jobs/queues";
import { isPrefixUri, joinUri, redactUri } from "@/lib/storage-uri";
import { operationName } from "./present";
import { finishFailed } from "./store";
import { log } from "../log";
import { speechEngineFor } from "../speech/engine";
import { assertCanProcess } from "../license";

async function insertAndEnqueue(row: typeof operations.$inferInsert): Promise<{ name: string }> {
  const rt = await runtime();
  await rt.db.insert(operations).values(row);
  try {
    const jobId = await enqueueProcess(rt.boss, { operationId: row.id });
    await rt.db.update(operations).set({ jobId }).where(eq(operations.id, row.id));
  } catch (e) {
    log.error("could not enqueue operation", { operationId: row.id, error: (e as Error).message });
    await finishFailed(rt.db, row.id, "UNAVAILABLE", "the job queue is unavailable; try again");
    throw new ObscuraError("UNAVAILABLE", "the job queue is unavailable; try again");
  }
  log.info("operation accepted", { operationId: row.id, kind: row.kind, projectId: row.projectId });
  return { name: operationName({ projectId: row.projectId, id: row.id }) };
}

export async function createVideoOperation(body: unknown): Promise<{ name: string }> {
  const req = parseBody(videoProcessRequestSchema, body);
  await assertCanProcess();
  const projectId = req.projectId ?? config().defaultProjectId;
  const givenSession = req.videoContext?.prepareConfig?.sessionId;
  const fromStateBucket = isPrefixUri(req.inputUri);
  const rt = await runtime();
  if (givenSession && !fromStateBucket) {
    const existing = await rt.db.select().from(sessions).where(eq(sessions.id, givenSession)).limit(1);
    const s = existing[0];
    if (s && s.inputUri !== redactUri(req.inputUri) && !s.droppedAt) {
      throw new ObscuraError("ALREADY_EXISTS", `sessionId ${JSON.stringify(givenSession)} already belongs to another input; a session's input cannot change`, {
        details: [{ field: "videoContext.prepareConfig.sessionId", problem: "already used by a session with a different inputUri" }],
      });
    }
  }
  // A state bucket names its own session (manifest.json); the worker resolves it.
  const sessionId = givenSession ?? (fromStateBucket ? "" : crypto.randomUUID());
  const spec = videoJobSpec(req, { projectId, sessionId });
  if (spec.features.includes("SPEECH_TRANSCRIPTION")) assertSpeechModel(spec.speech!.languageCode);
  return insertAndEnqueue({
    id: crypto.randomUUID(),
    projectId,
    kind: "video",
    status: "queued",
    inputUri: req.inputUri,
    outputUri: req.outputUri ?? null,
    sessionId: sessionId || null,
    request: spec,
  });
}

/** SPEECH_TRANSCRIPTION without a model for the language is refused before anything runs. */
function assertSpeechModel(languageCode: string): void {
  const choice = speechEngineFor(languageCode);
  if (choice.ok) return;
  throw new ObscuraError("INVALID_ARGUMENT", choice.reason, {
    details: [{ field: "videoContext.speechTranscriptionConfig.languageCode", problem: `no speech model installed for ${JSON.stringify(languageCode)}` }],
  });
}

export async function createImageOperation(body: unknown): Promise<{ name: string }> {
  const req = parseBody(imageProcessRequestSchema, body);
  await assertCanProcess();
  const projectId = req.projectId ?? config().defaultProjectId;
  const outputUri = isPrefixUri(req.outputUri) ? joinUri(req.outputUri, "image.jpg") : req.outputUri;
  const spec = imageJobSpec(req, { projectId, outputUri });
  return insertAndEnqueue({
    id: crypto.randomUUID(),
    projectId,
    kind: "image",
    status: "queued",
    inputUri: req.inputUri,
    outputUri,
    request: spec,
  });
}
