/**
 * Media of analytics streams (recorded clips, saved frames): records and their bytes
 * (docs/data-api.md#media). The storage URI stays on the server; records point at
 * GET /media/<stream_id>?mediaId=<id> on this server.
 */
import { and, desc, eq, gte, lt } from "drizzle-orm";
import { z } from "zod";
import { ObscuraError } from "@/lib/errors";
import { db as database } from "../db/client";
import { media } from "../db/schema";
import { readBytes } from "../storage";
import { parse, parseTimestamp } from "./query";

const MEDIA_TYPES = ["IMAGE", "VIDEO", "IMAGE_AND_VIDEO"] as const;

type Row = typeof media.$inferSelect;

function record(r: Row, base: string) {
  return {
    workspaceId: r.workspaceId,
    streamId: r.streamId,
    id: r.id,
    deviceId: r.deviceId,
    timeCollected: r.timeCollected.toISOString(),
    mediaType: r.mediaType,
    url: `${base}/media/${encodeURIComponent(r.streamId)}?mediaId=${encodeURIComponent(r.id)}`,
    captureType: r.captureType,
    startTime: r.startTime.toISOString(),
    durationMs: r.durationMs,
    objects: r.objects,
    events: r.events,
  };
}

function mediaType(raw: string | null): "IMAGE" | "VIDEO" | null {
  if (raw === null || raw === "" || raw === "IMAGE_AND_VIDEO") return null;
  if (raw === "IMAGE" || raw === "VIDEO") return raw;
  throw new ObscuraError("INVALID_ARGUMENT", `mediaType ${JSON.stringify(raw)} must be IMAGE, VIDEO or IMAGE_AND_VIDEO`, { details: [{ field: "mediaType", problem: "is not a media type" }] });
}

/** GET /media/<stream_id>/latest[?mediaType]: the newest item of each type asked. */
export async function latestMedia(streamId: string, rawType: string | null, base: string) {
  const type = mediaType(rawType);
  const d = await database();
  const out = [];
  for (const t of type ? [type] : (["IMAGE", "VIDEO"] as const)) {
    const [r] = await d.select().from(media).where(and(eq(media.streamId, streamId), eq(media.mediaType, t))).orderBy(desc(media.timeCollected)).limit(1);
    if (r) out.push(record(r, base));
  }
  return out;
}

const queryBody = z.object({
  streamId: z.string({ error: "streamId must be a string" }).min(1),
  mediaType: z.enum(MEDIA_TYPES, { error: `mediaType must be one of ${MEDIA_TYPES.join(", ")}` }).default("IMAGE_AND_VIDEO"),
  startTime: z.string({ error: "startTime must be an ISO 8601 timestamp" }),
  endTime: z.string({ error: "endTime must be an ISO 8601 timestamp" }),
  limit: z.number().int().min(1).max(10_000).default(1000),
});

/** POST /media/query. */
export async function queryMedia(body: unknown, base: string) {
  const b = parse(queryBody, body);
  const start = parseTimestamp(b.startTime);
  const end = parseTimestamp(b.endTime);
  if (!start || !end) throw new ObscuraError("INVALID_ARGUMENT", `${!start ? "startTime" : "endTime"} is not an ISO 8601 timestamp`, { details: [{ field: !start ? "startTime" : "endTime", problem: "is not a timestamp" }] });
  const type = mediaType(b.mediaType);
  const d = await database();
  const rows = await d
    .select()
    .from(media)
    .where(and(eq(media.streamId, b.streamId), gte(media.timeCollected, start), lt(media.timeCollected, end), ...(type ? [eq(media.mediaType, type)] : [])))
    .orderBy(media.timeCollected)
    .limit(b.limit);
  return rows.map((r) => record(r, base));
}

/** GET /media/<stream_id>[?mediaId]: the item's bytes (the newest item without mediaId). */
export async function mediaBytes(streamId: string, mediaId: string | null): Promise<{ bytes: Buffer; contentType: string; id: string }> {
  const d = await database();
  const [r] = mediaId
    ? await d.select().from(media).where(and(eq(media.streamId, streamId), eq(media.id, mediaId))).limit(1)
    : await d.select().from(media).where(eq(media.streamId, streamId)).orderBy(desc(media.timeCollected)).limit(1);
  if (!r) throw new ObscuraError("NOT_FOUND", mediaId ? `no media ${mediaId} in stream ${streamId}` : `no media in stream ${streamId}`);
  return { bytes: await readBytes(r.uri), contentType: r.contentType, id: r.id };
}
