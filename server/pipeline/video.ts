/**
 * The video pipeline: prepare (fetch, probe, hash, thumbnails), detect (server/vision at the
 * profile's stride, joined into tracks by server/tracking), render (server/render: the tracks'
 * boxes redacted on every frame, H.264/AAC MP4, audio masked when asked), then persist
 * the session state and write outputs by the spec's output rules, and finally STATE_DROP if asked.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { ObscuraError } from "@/lib/errors";
import { DETECTION_FEATURES } from "@/lib/api/common";
import type { VideoJobSpec } from "@/lib/api/video";
import { config } from "../config";
import { operations, sessions } from "../db/schema";
import { hashFile, makeThumbnails, probe } from "../media";
import { renderVideo } from "../render";
import { downloadPrefix, downloadToFile, isPrefixUri, joinUri, redactUri, removePrefix, uploadDir, uploadFile } from "../storage";
import { siblingUri } from "@/lib/storage-uri";
import type { PipelineContext, PipelineResult } from "./context";
import { DEFAULT_LANGUAGE_CODE } from "@/lib/api/video";
import { toWebVTT, transcribeMedia } from "../speech";
import { checkVideoLeaks, leakCheckEnabled, leakFeatures, leakSummary, type LeakSummary } from "./leak-check";
import { mergeTracks } from "./merge-tracks";
import { objectsJsonl, trackCounts } from "./detections";

export { objectsJsonl, trackCounts };
import { FILES, MANIFEST_SCHEMA, readManifest, writeJson, type DetectionsFile, type SessionManifest } from "./state";
import { log } from "../log";
import { detectVideo, type VideoDetectionResult } from "../vision/video";
import { FEATURE_TYPES } from "../vision/engine";
import { trackBoxesByFrame } from "../tracking";
import type { ObjectType } from "../vision/types";

/** The new run's tracks replace those of the types just detected, except a reviewer's (merge-tracks.ts). */
export function mergeDetections(prev: DetectionsFile, features: readonly string[], result: VideoDetectionResult): DetectionsFile {
  const types = new Set<ObjectType>(features.flatMap((f) => FEATURE_TYPES[f as keyof typeof FEATURE_TYPES] ?? []));
  return {
    ...prev,
    features: [...new Set([...prev.features, ...(features as DetectionsFile["features"])])],
    detectors: [...new Set([...prev.detectors, ...result.detectors])],
    missingFeatures: [...new Set([...prev.missingFeatures.filter((f) => !features.includes(f)), ...result.missingFeatures])],
    profile: result.profile,
    tracks: mergeTracks(prev.tracks, types, result.tracks),
  };
}

export function internalStateUri(sessionId: string): string {
  return joinUri(config().stateUri, `${sessionId}/`);
}

function sourceName(inputUri: string): string {
  const pathPart = inputUri.split("?")[0]!;
  const last = pathPart.split("/").pop() ?? "";
  let name = last;
  try {
    name = decodeURIComponent(last);
  } catch {
    /* a stray "%" (literal in s3 keys, kept by file URIs: "100%.mp4") stays as written */
  }
  const ext = path.extname(name).toLowerCase();
  return `source${/^\.[a-z0-9]{1,5}$/.test(ext) ? ext : ".bin"}`;
}

export async function runVideoPipeline(ctx: PipelineContext, spec: VideoJobSpec): Promise<PipelineResult> {
  const { signal } = ctx;
  const f = new Set(spec.features);
  const render = f.has("MEDIA_RENDER");
  const drop = f.has("STATE_DROP");
  const detect = DETECTION_FEATURES.filter((d) => f.has(d));
  const onlyDrop = [...f].every((x) => x === "STATE_DROP");
  const stateDir = path.join(ctx.workDir, "state");
  await fs.mkdir(stateDir, { recursive: true });

  if (onlyDrop) return { outputUri: await dropOnly(ctx, spec) };
  const leakCheck = render && leakCheckEnabled(spec.render.leakCheck);
  const speech = f.has("SPEECH_TRANSCRIPTION");

  const progress = ctx.progress([
    ["fetch", 30],
    ["probe", 3],
    ["hash", 7],
    ["thumbnails", 5],
    ["detect", detect.length ? 40 : 1],
    ["transcribe", speech ? 15 : 0],
    ["render", render ? 44 : 0],
    ["leakcheck", leakCheck ? 30 : 0],
    ["save", 10],
  ]);

  // 1. The source: a state bucket, the session's internal state, or the input itself.
  progress.stage("fetch");
  let manifest: SessionManifest | null = null;
  let sessionId = spec.sessionId;
  const fromBucket = isPrefixUri(spec.inputUri);
  if (fromBucket) {
    await downloadPrefix(spec.inputUri, stateDir, { signal, ignoreCertificateErrors: spec.prepare.ignoreCertificateErrors });
    manifest = await readManifest(stateDir);
    if (spec.prepare.sessionIdGiven && spec.sessionId !== manifest.sessionId) {
      throw new ObscuraError(
        "FAILED_PRECONDITION",
        `videoContext.prepareConfig.sessionId ${JSON.stringify(spec.sessionId)} differs from the state bucket's session ${JSON.stringify(manifest.sessionId)}; a sessionId cannot change`,
      );
    }
    sessionId = manifest.sessionId;
    await ctx.db.update(operations).set({ sessionId }).where(eq(operations.id, ctx.operation.id));
  }
  // The session's version now: tracks an editor saves while this operation runs must survive it.
  const [startRow] = await ctx.db.select({ version: sessions.version }).from(sessions).where(eq(sessions.id, sessionId)).limit(1);
  const prepare = !manifest || f.has("MEDIA_PREPARE");
  let source = manifest ? path.join(stateDir, manifest.source) : path.join(stateDir, sourceName(spec.inputUri));
  if (!manifest) {
    await downloadToFile(spec.inputUri, source, {
      signal,
      ignoreCertificateErrors: spec.prepare.ignoreCertificateErrors,
      onProgress: (bytes, total) => total && progress.update(bytes / total),
    });
  }

  // 2. Prepare: probe, hash, thumbnails.
  const now = new Date().toISOString();
  let media = manifest?.media;
  let originalHashes = manifest?.hashes.original ?? {};
  let thumbnails = manifest?.thumbnails ?? [];
  if (prepare || !media) {
    progress.stage("probe");
    media = await probe(source, { signal });
    if (media.kind !== "video") throw new ObscuraError("INVALID_ARGUMENT", "inputUri must be a video; use images:process for images");
    progress.stage("hash");
    originalHashes = await hashFile(source, spec.prepare.hashTypes, { signal });
    progress.stage("thumbnails");
    await fs.rm(path.join(stateDir, FILES.thumbnails), { recursive: true, force: true });
    const thumbs = await makeThumbnails(source, path.join(stateDir, FILES.thumbnails), media, { signal });
    thumbnails = thumbs.map((t) => ({ file: path.relative(stateDir, t.file).split(path.sep).join("/"), timeSeconds: t.timeSeconds }));
  }

  // 3. Detect: tracks of the requested types replace earlier ones of those types; others stay.
  progress.stage("detect");
  const detectionsPath = path.join(stateDir, FILES.detections);
  const previous = await fs
    .readFile(detectionsPath, "utf8")
    .then((t) => JSON.parse(t) as DetectionsFile)
    .catch(() => null);
  let detections: DetectionsFile = {
    schema: "obscura.detections/v1",
    sessionId,
    features: previous?.features ?? [],
    detectors: previous?.detectors ?? [],
    missingFeatures: previous?.missingFeatures ?? [],
    profile: previous?.profile ?? null,
    fps: media.video.fps,
    frameCount: media.video.frameCount,
    width: media.video.displayWidth,
    height: media.video.displayHeight,
    tracks: previous?.tracks ?? [],
  };
  if (detect.length) {
    const result = await detectVideo(
      source,
      media,
      detect,
      { ...spec.process },
      { signal, onProgress: (x) => progress.update(x) },
    );
    detections = mergeDetections(detections, detect, result);
    if (result.missingFeatures.length) log.warn("no detector installed for some requested features", { sessionId, features: result.missingFeatures });
  }
  await writeJson(detectionsPath, detections);
  await fs.writeFile(path.join(stateDir, FILES.objects), objectsJsonl(detections));

  // 3b. Speech: transcript.json and transcript.vtt (server/speech).
  let transcript = manifest?.transcript ?? null;
  if (speech) {
    progress.stage("transcribe");
    const languageCode = spec.speech?.languageCode ?? DEFAULT_LANGUAGE_CODE;
    const t = await transcribeMedia(source, { languageCode, signal, onProgress: (x) => progress.update(x) });
    await writeJson(path.join(stateDir, FILES.transcript), t);
    await fs.writeFile(path.join(stateDir, FILES.transcriptVtt), toWebVTT(t));
    transcript = { transcribedAt: new Date().toISOString(), file: FILES.transcript, vtt: FILES.transcriptVtt, languageCode, engine: t.engine, segmentCount: t.segments.length };
    log.info("speech transcribed", { sessionId, languageCode, engine: t.engine, segments: t.segments.length, audioSeconds: t.stats.audioSeconds, seconds: t.stats.processingSeconds });
  }

  // 4. Render.
  let exportHashes = manifest?.hashes.export ?? {};
  let renderInfo = manifest?.render ?? null;
  const redacted = path.join(stateDir, FILES.redacted);
  if (render) {
    progress.stage("render");
    const rendered = await renderVideo(source, redacted, {
      info: media,
      tracks: detections.tracks,
      boxSpace: { width: detections.width, height: detections.height },
      config: spec.render,
      signal,
      onProgress: (x) => progress.update(x),
    });
    log.info("video rendered", { sessionId, frames: rendered.frames, seconds: +rendered.seconds.toFixed(2), redactSeconds: +rendered.redactSeconds.toFixed(2) });
    exportHashes = spec.render.exportHashes.length ? await hashFile(redacted, spec.render.exportHashes, { signal }) : {};
    renderInfo = { renderedAt: new Date().toISOString(), file: FILES.redacted, config: spec.render };
  }

  // 4b. Leak check: the rendered output scanned again (leak-check.ts); a new render makes an old report stale.
  let leaks: LeakSummary | null = null;
  let leakInfo = render ? null : (manifest?.leakCheck ?? null);
  if (render) await fs.rm(path.join(stateDir, FILES.leaks), { force: true });
  if (leakCheck) {
    progress.stage("leakcheck");
    const report = await checkVideoLeaks(redacted, {
      tracks: detections.tracks,
      boxSpace: { width: detections.width, height: detections.height },
      fps: media.video.fps,
      style: spec.render,
      features: leakFeatures(detect, detections.features),
      settings: spec.process,
      signal,
      onProgress: (x) => progress.update(x),
    });
    await writeJson(path.join(stateDir, FILES.leaks), report);
    leaks = leakSummary(report);
    leakInfo = { checkedAt: report.checkedAt, file: FILES.leaks, ...leaks };
    log.info("leak check done", { sessionId, leaks: leaks.leakCount, framesScanned: leaks.framesScanned });
  }

  // 5. Persist the state, then the outputs.
  progress.stage("save");
  const next: SessionManifest = {
    schema: MANIFEST_SCHEMA,
    sessionId,
    projectId: spec.projectId,
    inputUri: manifest?.inputUri ?? redactUri(spec.inputUri),
    createdAt: manifest?.createdAt ?? now,
    updatedAt: new Date().toISOString(),
    source: path.basename(source),
    media,
    hashes: { original: originalHashes, export: exportHashes },
    features: [...new Set([...(manifest?.features ?? []), ...spec.features])],
    thumbnails,
    render: renderInfo,
    leakCheck: leakInfo,
    transcript,
    acl: [...new Set([...(manifest?.acl ?? []), ...spec.acl])],
  };
  await writeJson(path.join(stateDir, FILES.manifest), next);
  await writeJson(path.join(stateDir, FILES.hashes), next.hashes);

  const internal = internalStateUri(sessionId);
  // Tracks saved through the session API during this operation (the version moved) stay: without
  // a detection run this operation has nothing newer to write over them.
  let keepSaved: string[] = [];
  if (!detect.length && startRow) {
    const [nowRow] = await ctx.db.select({ version: sessions.version }).from(sessions).where(eq(sessions.id, sessionId)).limit(1);
    if (nowRow && nowRow.version !== startRow.version) {
      keepSaved = [FILES.detections, FILES.objects];
      log.info("tracks were saved while the operation ran: keeping them", { sessionId, from: startRow.version, to: nowRow.version });
    }
  }
  if (!drop) await uploadDir(stateDir, internal, { signal, skip: keepSaved });
  let outputUri: string;
  if (spec.outputUri && isPrefixUri(spec.outputUri)) {
    await uploadDir(stateDir, spec.outputUri, { signal });
    outputUri = spec.outputUri;
  } else if (spec.outputUri) {
    if (render) await uploadFile(redacted, spec.outputUri, { signal, contentType: "video/mp4" });
    outputUri = spec.outputUri;
  } else {
    outputUri = render ? joinUri(internal, FILES.redacted) : internal;
  }
  // The transcript's files: in the state bucket; beside a single output file (<name>.vtt,
  // <name>.transcript.json); in the internal state otherwise.
  let transcriptFiles: PipelineResult["transcript"] = null;
  if (speech && transcript) {
    let jsonUri: string;
    let vttUri: string;
    if (spec.outputUri && isPrefixUri(spec.outputUri)) {
      jsonUri = joinUri(spec.outputUri, FILES.transcript);
      vttUri = joinUri(spec.outputUri, FILES.transcriptVtt);
    } else {
      jsonUri = joinUri(internal, FILES.transcript);
      vttUri = joinUri(internal, FILES.transcriptVtt);
      if (spec.outputUri) {
        const json = siblingUri(spec.outputUri, ".transcript.json");
        const vtt = siblingUri(spec.outputUri, ".vtt");
        try {
          await uploadFile(path.join(stateDir, FILES.transcript), json, { signal, contentType: "application/json" });
          await uploadFile(path.join(stateDir, FILES.transcriptVtt), vtt, { signal, contentType: "text/vtt" });
          [jsonUri, vttUri] = [json, vtt];
        } catch (e) {
          // A blob SAS signs one name only: the transcript then stays in the state (it is there either way).
          if (signal.aborted) throw e;
          log.warn("could not write the transcript beside the output; it is in the session state", { sessionId, error: (e as Error).message });
        }
      }
    }
    transcriptFiles = { languageCode: transcript.languageCode, engine: transcript.engine, segmentCount: transcript.segmentCount, jsonUri, vttUri };
  }
  progress.update(0.8);

  const inputUri = manifest?.inputUri ?? redactUri(spec.inputUri); // sessions keep no secrets
  await ctx.db
    .insert(sessions)
    .values({ id: sessionId, projectId: spec.projectId, inputUri, stateUri: drop ? null : internal, media, hashes: next.hashes, acl: next.acl, lastOperationId: ctx.operation.id, trackCounts: trackCounts(detections.tracks), ...(detect.length ? { version: 1, editedAt: new Date(), editedBy: "detection" } : {}) })
    .onConflictDoUpdate({
      target: sessions.id,
      set: {
        stateUri: drop ? null : internal,
        media,
        hashes: next.hashes,
        acl: next.acl,
        lastOperationId: ctx.operation.id,
        droppedAt: drop ? new Date() : null,
        updatedAt: new Date(),
        // A detection run rewrote the tracks: an editor holding the old version must reload.
        // Without one, the tracks (and their counts) are the editor's and stay as they are.
        ...(detect.length ? { trackCounts: trackCounts(detections.tracks), version: sql`${sessions.version} + 1`, editedAt: new Date(), editedBy: "detection" } : {}),
      },
    });
  if (drop) await dropInternalState(ctx, sessionId);
  return { outputUri, leakCheck: leaks, transcript: transcriptFiles, exportHashes: render && spec.render.exportHashes.length ? exportHashes : null };
}

/** STATE_DROP alone: find the session (by sessionId, state bucket, or input) and remove its internal state. */
async function dropOnly(ctx: PipelineContext, spec: VideoJobSpec): Promise<string> {
  const progress = ctx.progress([["drop", 1]]);
  progress.stage("drop");
  let sessionId = spec.prepare.sessionIdGiven ? spec.sessionId : "";
  if (!sessionId && isPrefixUri(spec.inputUri)) {
    const dir = path.join(ctx.workDir, "state");
    await downloadPrefix(joinUri(spec.inputUri, ""), dir, { signal: ctx.signal });
    sessionId = (await readManifest(dir)).sessionId;
  }
  if (!sessionId) {
    const rows = await ctx.db.select().from(sessions).where(eq(sessions.inputUri, redactUri(spec.inputUri))).limit(1);
    sessionId = rows[0]?.id ?? "";
  }
  if (!sessionId) throw new ObscuraError("NOT_FOUND", "no session found for this inputUri; give videoContext.prepareConfig.sessionId");
  await ctx.db.update(operations).set({ sessionId }).where(eq(operations.id, ctx.operation.id));
  const uri = await dropInternalState(ctx, sessionId);
  progress.update(1);
  return uri;
}

async function dropInternalState(ctx: PipelineContext, sessionId: string): Promise<string> {
  const uri = internalStateUri(sessionId);
  const removed = await removePrefix(uri, { signal: ctx.signal });
  await ctx.db.update(sessions).set({ stateUri: null, droppedAt: new Date(), updatedAt: new Date() }).where(eq(sessions.id, sessionId));
  log.info("session state dropped", { sessionId, objects: removed });
  return uri;
}
