/**
 * Sessions as the review editor sees them (docs/sessions.md): list a project's sessions, read one
 * with its tracks, save edited tracks with a version check, find the media to play. Access:
 * admins and API clients see every session; reviewers those whose `acl` names them.
 *
 * Saves are optimistic: the editor sends the version it loaded; the row's version is bumped only
 * if it still matches (one UPDATE ... WHERE version = $v), so of two reviewers saving edits of the
 * same version one wins and the other gets 409 with who saved and when. A detection run bumps the
 * version too. The tracks are written to the session state (detections.json, objects.jsonl)
 * inside the same transaction, so a failed write leaves the version as it was.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { and, desc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import { ObscuraError } from "@/lib/errors";
import type { SaveTracksRequest } from "@/lib/api/session";
import { db as database } from "../db/client";
import { config } from "../config";
import { operations, sessions, type SessionRow } from "../db/schema";
import type { Principal } from "../auth/bearer";
import { canSeeSession } from "../identity/access";
import { assertInScope } from "../embed/tokens";
import { FILES, type DetectionsFile } from "../pipeline/state";
import { objectsJsonl, trackCounts } from "../pipeline/detections";
import { downloadToFile, joinUri, readBytes, writeBytes } from "../storage";
import type { Track } from "../tracking";
import type { MediaInfo } from "../media";

export interface SessionSummary {
  sessionId: string;
  projectId: string;
  /** The source's file name. */
  name: string;
  version: number;
  editedAt: string | null;
  editedBy: string | null;
  createdAt: string;
  media: { durationSeconds: number | null; width: number; height: number; fps: number; frameCount: number } | null;
  trackCounts: Record<string, number>;
  /** The last operation on the session: its state and progress. */
  operation: { name: string; done: boolean; status: string; progressPercent: number } | null;
  acl: string[];
}

const nameOf = (inputUri: string) => {
  const last = inputUri.split("?")[0]!.split("/").filter(Boolean).pop() ?? inputUri;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
};

const operationSummary = (op: typeof operations.$inferSelect): NonNullable<SessionSummary["operation"]> => ({
  name: `projects/${op.projectId}/locations/${config().locationId}/operations/${op.id}`,
  done: op.done,
  status: op.status,
  progressPercent: op.progressPercent,
});

function summary(s: SessionRow, op: typeof operations.$inferSelect | null): SessionSummary {
  const m = s.media as MediaInfo | null;
  return {
    sessionId: s.id,
    projectId: s.projectId,
    name: nameOf(s.inputUri),
    version: s.version,
    editedAt: s.editedAt?.toISOString() ?? null,
    editedBy: s.editedBy,
    createdAt: s.createdAt.toISOString(),
    media: m?.video ? { durationSeconds: m.durationSeconds, width: m.video.displayWidth, height: m.video.displayHeight, fps: m.video.fps, frameCount: m.video.frameCount } : null,
    trackCounts: s.trackCounts ?? {},
    operation: op ? operationSummary(op) : null,
    acl: s.acl,
  };
}

export async function listSessions(projectId: string, who: Principal): Promise<SessionSummary[]> {
  assertInScope(who, projectId);
  const d = await database();
  const rows = await d
    .select({ s: sessions, op: operations })
    .from(sessions)
    .leftJoin(operations, eq(operations.id, sessions.lastOperationId))
    .where(and(eq(sessions.projectId, projectId), isNull(sessions.droppedAt)))
    .orderBy(desc(sessions.createdAt));
  const listed = rows.filter((r) => canSeeSession(who, r.s) && (!who.scope?.sessionId || r.s.id === who.scope.sessionId)).map((r) => summary(r.s, r.op));
  // A new video's session row is written when its first operation finishes: until then its
  // running operation stands for it, so an upload shows up at once, with its progress.
  const known = new Set(rows.map((r) => r.s.id));
  const pending = await d
    .select()
    .from(operations)
    .where(and(eq(operations.projectId, projectId), eq(operations.kind, "video"), eq(operations.done, false), isNotNull(operations.sessionId)))
    .orderBy(desc(operations.createdAt));
  const early: SessionSummary[] = [];
  for (const op of pending) {
    const id = op.sessionId!;
    const acl = ((op.request as { acl?: string[] }).acl ?? []) as string[];
    if (known.has(id) || !canSeeSession(who, { acl }) || (who.scope?.sessionId && who.scope.sessionId !== id)) continue;
    known.add(id);
    early.push({ sessionId: id, projectId, name: nameOf(op.inputUri), version: 0, editedAt: null, editedBy: null, createdAt: op.createdAt.toISOString(), media: null, trackCounts: {}, operation: operationSummary(op), acl });
  }
  return [...early, ...listed];
}

/** The session row if it exists (404) and `who` may see it (403 naming the acl). */
export async function visible(projectId: string, sessionId: string, who: Principal): Promise<SessionRow> {
  assertInScope(who, projectId, sessionId);
  const d = await database();
  const [s] = await d.select().from(sessions).where(and(eq(sessions.id, sessionId), eq(sessions.projectId, projectId))).limit(1);
  if (!s || s.droppedAt || !s.stateUri) throw new ObscuraError("NOT_FOUND", `no session ${JSON.stringify(sessionId)} in project ${JSON.stringify(projectId)}`);
  if (!canSeeSession(who, s)) throw new ObscuraError("PERMISSION_DENIED", `${who.name} is not in this video's acl: ask an administrator for access`);
  return s;
}

export async function readDetections(s: SessionRow): Promise<DetectionsFile | null> {
  try {
    return JSON.parse((await readBytes(joinUri(s.stateUri!, FILES.detections))).toString("utf8")) as DetectionsFile;
  } catch (e) {
    if (e instanceof ObscuraError && e.status === "NOT_FOUND") return null;
    throw e;
  }
}

export async function getSession(projectId: string, sessionId: string, who: Principal): Promise<SessionSummary & { tracks: Track[]; frame: { width: number; height: number; fps: number; frameCount: number } | null }> {
  const s = await visible(projectId, sessionId, who);
  const d = await database();
  const [op] = s.lastOperationId ? await d.select().from(operations).where(eq(operations.id, s.lastOperationId)).limit(1) : [];
  const det = await readDetections(s);
  return {
    ...summary(s, op ?? null),
    tracks: det?.tracks ?? [],
    frame: det ? { width: det.width, height: det.height, fps: det.fps, frameCount: det.frameCount } : null,
  };
}

export async function saveTracks(projectId: string, sessionId: string, who: Principal, body: SaveTracksRequest): Promise<{ version: number; editedAt: string }> {
  const s = await visible(projectId, sessionId, who);
  const det = await readDetections(s);
  if (!det) throw new ObscuraError("FAILED_PRECONDITION", "this session has no detections yet: run a detection feature first");
  const last = det.frameCount > 0 ? det.frameCount - 1 : Number.MAX_SAFE_INTEGER;
  const outside = body.tracks.find((t) => t.lastFrame > last);
  if (outside) throw new ObscuraError("INVALID_ARGUMENT", `track ${outside.id} ends at frame ${outside.lastFrame}, after the video's last frame ${last}`, { details: [{ field: "tracks", problem: "frames beyond the video" }] });
  const d = await database();
  const editedAt = new Date();
  const version = await d.transaction(async (tx) => {
    const [row] = await tx
      .update(sessions)
      .set({ version: sql`${sessions.version} + 1`, editedAt, editedBy: who.name, trackCounts: trackCounts(body.tracks), updatedAt: editedAt })
      .where(and(eq(sessions.id, s.id), eq(sessions.version, body.version)))
      .returning();
    if (!row) {
      const [now] = await tx.select().from(sessions).where(eq(sessions.id, s.id)).limit(1);
      throw new ObscuraError(
        "ABORTED",
        `this video was saved by ${now?.editedBy ?? "someone"} at ${now?.editedAt?.toISOString() ?? "an unknown time"} (version ${now?.version}) after you opened version ${body.version}: reload it to see their changes, then make yours again`,
      );
    }
    const next: DetectionsFile = { ...det, tracks: body.tracks as Track[] };
    await writeBytes(joinUri(s.stateUri!, FILES.detections), JSON.stringify(next, null, 2) + "\n", { contentType: "application/json" });
    await writeBytes(joinUri(s.stateUri!, FILES.objects), objectsJsonl(next), { contentType: "application/x-ndjson" });
    return row.version;
  });
  return { version, editedAt: editedAt.toISOString() };
}

/**
 * A local file of the session's source video for the player: the state's own file for file://
 * state, else a copy fetched once into OBSCURA_DATA_DIR/cache/<sessionId>/.
 */
export async function sessionMediaFile(projectId: string, sessionId: string, who: Principal): Promise<{ file: string; contentType: string }> {
  const s = await visible(projectId, sessionId, who);
  const manifest = JSON.parse((await readBytes(joinUri(s.stateUri!, FILES.manifest))).toString("utf8")) as { source: string };
  const uri = joinUri(s.stateUri!, manifest.source);
  const ext = path.extname(manifest.source).toLowerCase();
  const contentType = ext === ".mp4" || ext === ".m4v" || ext === ".mov" ? "video/mp4" : ext === ".webm" ? "video/webm" : "application/octet-stream";
  if (uri.startsWith("file://")) return { file: fileURLToPath(uri), contentType };
  const cached = path.join(config().dataDir, "cache", s.id, manifest.source);
  if (!fs.existsSync(cached)) {
    fs.mkdirSync(path.dirname(cached), { recursive: true });
    await downloadToFile(uri, cached + ".part");
    fs.renameSync(cached + ".part", cached);
  }
  return { file: cached, contentType };
}

/** The session's poster (first frame, upright, JPEG) for lists; null when it has none. */
export async function sessionPoster(projectId: string, sessionId: string, who: Principal): Promise<Buffer | null> {
  const s = await visible(projectId, sessionId, who);
  try {
    return await readBytes(joinUri(s.stateUri!, `${FILES.thumbnails}/poster.jpg`));
  } catch (e) {
    if (e instanceof ObscuraError && e.status === "NOT_FOUND") return null;
    throw e;
  }
}

/** Projects with at least one session `who` may see, and how many, most recent first. */
export async function listProjects(who: Principal): Promise<{ projectId: string; sessions: number; lastCreatedAt: string }[]> {
  const d = await database();
  const rows = await d.select().from(sessions).where(isNull(sessions.droppedAt)).orderBy(desc(sessions.createdAt));
  const out = new Map<string, { projectId: string; sessions: number; lastCreatedAt: string }>();
  for (const s of rows) {
    if (!canSeeSession(who, s)) continue;
    const p = out.get(s.projectId) ?? { projectId: s.projectId, sessions: 0, lastCreatedAt: s.createdAt.toISOString() };
    p.sessions++;
    out.set(s.projectId, p);
  }
  return [...out.values()];
}
