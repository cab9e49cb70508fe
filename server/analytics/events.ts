/**
 * Analytics events and media as stored (PostgreSQL tables `sensor_events` and `media`): what the
 * pipeline writes and the Data API reads (docs/data-api.md).
 */
import crypto from "node:crypto";
import { db as database } from "../db/client";
import { media, sensorEvents } from "../db/schema";

export const SENSOR_TYPES = ["COUNT", "SPEED", "FISH", "PRESENCE", "COLLISION"] as const;
export type SensorType = (typeof SENSOR_TYPES)[number];
export const DIRECTIONS = ["NORTH", "SOUTH"] as const;

export interface SensorEventInput {
  id?: string;
  workspaceId: string;
  deviceId: string;
  streamId: string;
  sensorId: string;
  sensorName: string;
  sensorType: SensorType;
  direction?: "NORTH" | "SOUTH" | null;
  objectType: string;
  uniqueId?: number | null;
  confidence?: number | null;
  model?: string | null;
  value: number;
  timeCollected: Date;
  /** Presence data, speed, length and other fields of the event. */
  data?: Record<string, unknown>;
  track?: unknown[] | null;
  boundingBoxImage?: string | null;
  frameImage?: string | null;
}

/** Stores events (in batches of 1,000 rows); returns their ids. */
export async function insertEvents(events: readonly SensorEventInput[]): Promise<string[]> {
  const d = await database();
  const rows = events.map((e) => ({
    id: e.id ?? crypto.randomUUID(),
    workspaceId: e.workspaceId,
    deviceId: e.deviceId,
    streamId: e.streamId,
    sensorId: e.sensorId,
    sensorName: e.sensorName,
    sensorType: e.sensorType,
    direction: e.direction ?? null,
    objectType: e.objectType,
    uniqueId: e.uniqueId ?? null,
    confidence: e.confidence ?? null,
    model: e.model ?? null,
    value: e.value,
    timeCollected: e.timeCollected,
    data: e.data ?? {},
    track: e.track ?? null,
    boundingBoxImage: e.boundingBoxImage ?? null,
    frameImage: e.frameImage ?? null,
  }));
  for (let i = 0; i < rows.length; i += 1000) await d.insert(sensorEvents).values(rows.slice(i, i + 1000));
  return rows.map((r) => r.id);
}

export interface MediaInput {
  id?: string;
  workspaceId: string;
  streamId: string;
  deviceId: string;
  timeCollected: Date;
  mediaType: "IMAGE" | "VIDEO";
  uri: string;
  contentType: string;
  captureType?: string;
  startTime: Date;
  durationMs?: number;
  objects?: Array<{ objectId: string }>;
  events?: Array<{ eventId: string }>;
}

export async function insertMedia(items: readonly MediaInput[]): Promise<string[]> {
  const d = await database();
  const rows = items.map((m) => ({
    id: m.id ?? crypto.randomUUID(),
    workspaceId: m.workspaceId,
    streamId: m.streamId,
    deviceId: m.deviceId,
    timeCollected: m.timeCollected,
    mediaType: m.mediaType,
    uri: m.uri,
    contentType: m.contentType,
    captureType: m.captureType ?? "RAW",
    startTime: m.startTime,
    durationMs: m.durationMs ?? 0,
    objects: m.objects ?? [],
    events: m.events ?? [],
  }));
  if (rows.length) await d.insert(media).values(rows);
  return rows.map((r) => r.id);
}
