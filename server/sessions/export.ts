/**
 * The editor's export (docs/sessions.md#export): a MEDIA_RENDER operation on the session's internal
 * state, created through the same path as POST videos:process (so the job, the worker, progress,
 * leak check and licence checks are the API's own), its status for the progress bar, and the
 * redacted MP4 as a download. Also the frame crops the track list shows as thumbnails.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { and, desc, eq } from "drizzle-orm";
import { ObscuraError } from "@/lib/errors";
import { parseBody } from "@/lib/api/parse";
import { exportRequestSchema, frameRequestSchema, type ExportRequest } from "@/lib/api/session";
import { db as database } from "../db/client";
import { config } from "../config";
import { operations } from "../db/schema";
import type { Principal } from "../auth/bearer";
import { FILES, type SessionManifest as Manifest } from "../pipeline/state";
import { createVideoOperation } from "../operations/create";
import { presentOperation } from "../operations/present";
import { downloadToFile, joinUri, readBytes } from "../storage";
import { runFfmpeg } from "../media";
import { readDetections, sessionMediaFile, visible } from "./index";

export interface ExportStatus {
  /** The latest export (render) operation of the session, or null when none ran. */
  operation: { name: string; done: boolean; status: string; progressPercent: number; error: string | null } | null;
  /** The redacted file of the last finished render, when there is one. */
  file: { renderedAt: string; url: string; leakCount: number | null } | null;
}

const base = (projectId: string, sessionId: string) => `/api/v1/projects/${encodeURIComponent(projectId)}/sessions/${sessionId}`;

/** Starts the render of the session's saved tracks with the editor's style choice. */
export async function startExport(projectId: string, sessionId: string, who: Principal, body: unknown): Promise<{ name: string }> {
  const req: ExportRequest = parseBody(exportRequestSchema, body);
  const s = await visible(projectId, sessionId, who);
  const det = await readDetections(s);
  if (!det) throw new ObscuraError("FAILED_PRECONDITION", "this video has no tracks yet: wait for its processing to finish");
  return createVideoOperation({
    inputUri: s.stateUri!,
    projectId,
    features: ["MEDIA_RENDER"],
    videoContext: { prepareConfig: { sessionId }, renderConfig: req.renderConfig ?? {} },
  });
}

async function readManifest(stateUri: string): Promise<Manifest | null> {
  try {
    return JSON.parse((await readBytes(joinUri(stateUri, FILES.manifest))).toString("utf8")) as Manifest;
  } catch (e) {
    if (e instanceof ObscuraError && e.status === "NOT_FOUND") return null;
    throw e;
  }
}

export async function exportStatus(projectId: string, sessionId: string, who: Principal): Promise<ExportStatus> {
  const s = await visible(projectId, sessionId, who);
  const d = await database();
  const rows = await d.select().from(operations).where(and(eq(operations.sessionId, s.id), eq(operations.kind, "video"))).orderBy(desc(operations.createdAt)).limit(20);
  const row = rows.find((r) => (r.request as { features?: string[] }).features?.includes("MEDIA_RENDER"));
  const op = row ? presentOperation(row) : null;
  const manifest = await readManifest(s.stateUri!);
  return {
    operation: row
      ? { name: op!.name, done: row.done, status: row.status, progressPercent: row.progressPercent, error: op!.error?.message ?? null }
      : null,
    file: manifest?.render ? { renderedAt: manifest.render.renderedAt, url: `${base(projectId, sessionId)}/export/file`, leakCount: manifest.leakCheck?.leakCount ?? null } : null,
  };
}

/** A local path of the session's redacted.mp4 (fetched once into the cache for remote state). */
export async function exportFile(projectId: string, sessionId: string, who: Principal): Promise<{ file: string; downloadName: string }> {
  const s = await visible(projectId, sessionId, who);
  const manifest = await readManifest(s.stateUri!);
  if (!manifest?.render) throw new ObscuraError("NOT_FOUND", "this video has not been exported yet");
  const uri = joinUri(s.stateUri!, FILES.redacted);
  const stem = path.parse(manifest.source).name.replace(/^source$/, s.id);
  const original = s.inputUri.split("?")[0]!.split("/").pop() ?? stem;
  const downloadName = `${path.parse(decodeURIComponentSafe(original)).name || stem}-redacted.mp4`;
  if (uri.startsWith("file://")) {
    const file = fileURLToPath(uri);
    if (!fs.existsSync(file)) throw new ObscuraError("NOT_FOUND", "the exported file is missing from the session state");
    return { file, downloadName };
  }
  const cached = path.join(config().dataDir, "cache", s.id, `redacted-${Date.parse(manifest.render.renderedAt)}.mp4`);
  if (!fs.existsSync(cached)) {
    fs.mkdirSync(path.dirname(cached), { recursive: true });
    await downloadToFile(uri, cached + ".part");
    fs.renameSync(cached + ".part", cached);
  }
  return { file: cached, downloadName };
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** At most two thumbnail decoders at once: a track list opening asks for a dozen together. */
const FRAME_DECODERS = 2;
let framesRunning = 0;
const frameWaiters: Array<() => void> = [];
async function withFrameSlot<T>(run: () => Promise<T>): Promise<T> {
  if (framesRunning >= FRAME_DECODERS) await new Promise<void>((r) => frameWaiters.push(r)); // the slot is handed over
  else framesRunning++;
  try {
    return await run();
  } finally {
    const next = frameWaiters.shift();
    if (next) next();
    else framesRunning--;
  }
}

/**
 * One frame of the source, optionally cropped to a box (frame pixels) and scaled to `height`, as
 * JPEG: the track list's thumbnails. Seeks to the frame's time in the constant-rate timeline.
 */
export async function frameJpeg(projectId: string, sessionId: string, who: Principal, query: URLSearchParams): Promise<Buffer> {
  const { embed_token: _credential, ...params } = Object.fromEntries(query); // the credential is not a parameter
  const q = parseBody(frameRequestSchema, params);
  const s = await visible(projectId, sessionId, who);
  const det = await readDetections(s);
  if (!det) throw new ObscuraError("FAILED_PRECONDITION", "this video has no frames to show yet");
  if (q.frame >= det.frameCount) {
    throw new ObscuraError("INVALID_ARGUMENT", `frame ${q.frame} is past the video's last frame ${det.frameCount - 1}`, { details: [{ field: "frame", problem: `must be 0..${det.frameCount - 1}` }] });
  }
  const { file } = await sessionMediaFile(projectId, sessionId, who);
  const filters: string[] = [];
  if (q.w != null && q.h != null) {
    // pad the crop by 15% so the object is recognisable, keep it inside the picture
    const padX = q.w * 0.15;
    const padY = q.h * 0.15;
    const x = Math.max(0, Math.floor((q.x ?? 0) - padX));
    const y = Math.max(0, Math.floor((q.y ?? 0) - padY));
    const w = Math.max(2, Math.min(det.width - x, Math.ceil(q.w + 2 * padX)));
    const h = Math.max(2, Math.min(det.height - y, Math.ceil(q.h + 2 * padY)));
    // the boxes are in display pixels: scale the decoded picture to them first (anamorphic sources)
    filters.push(`scale=${det.width}:${det.height}`, `crop=${w}:${h}:${x}:${y}`);
  }
  filters.push(`scale=-2:${q.height}`);
  const out = path.join(config().dataDir, "tmp", `frame-${process.pid}-${Math.random().toString(36).slice(2)}.jpg`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  return withFrameSlot(async () => {
    try {
      await runFfmpeg(["-ss", ((q.frame + 0.5) / det.fps).toFixed(4), "-i", file, "-frames:v", "1", "-vf", filters.join(","), "-q:v", "4", "-y", out]);
      return fs.readFileSync(out);
    } finally {
      fs.rmSync(out, { force: true });
    }
  });
}

/** The session's transcript as WebVTT (SPEECH_TRANSCRIPTION), for the player's captions; null when none ran. */
export async function transcriptVtt(projectId: string, sessionId: string, who: Principal): Promise<{ vtt: Buffer; languageCode: string } | null> {
  const s = await visible(projectId, sessionId, who);
  const manifest = await readManifest(s.stateUri!);
  if (!manifest?.transcript) return null;
  try {
    return { vtt: await readBytes(joinUri(s.stateUri!, FILES.transcriptVtt)), languageCode: manifest.transcript.languageCode };
  } catch (e) {
    if (e instanceof ObscuraError && e.status === "NOT_FOUND") return null;
    throw e;
  }
}
