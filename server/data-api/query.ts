/**
 * The sensor Data API's queries (spec: the Data API half of sensor-data-and-detection-api.md;
 * docs/data-api.md). Aggregations run in SQL: windows by `date_bin` aligned on the query's start,
 * empty windows from `generate_series`, medians and quartiles by `percentile_cont`, on the
 * indexes (device, sensor, time) and (stream, sensor, time) of `sensor_events`.
 * Request bodies are checked with zod; a problem answers 400 naming the field, the value and what
 * is allowed. Timestamps are ISO 8601 with Z, +hh:mm, -hh:mm or +hhmm (or none: UTC).
 */
import { type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { ObscuraError } from "@/lib/errors";
import { db as database } from "../db/client";

export const FUNCTIONS = ["COUNT", "SUM", "AVERAGE", "MIN", "MAX", "MEDIAN", "QUARTILE_1", "QUARTILE_2", "QUARTILE_3"] as const;
export type AggregateFunction = (typeof FUNCTIONS)[number];
const ORDERS = ["ASCENDING", "DESCENDING"] as const;

const TS = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** An ISO 8601 timestamp (offset Z, +hh:mm, -hh:mm, +hhmm, or none for UTC) -> Date; null when malformed. */
export function parseTimestamp(text: string): Date | null {
  const m = TS.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = "00", mi = "00", s = "00", frac = "", zone = "Z"] = m;
  const ms = Number((frac + "000").slice(0, 3));
  let offset = 0;
  if (zone.toUpperCase() !== "Z") {
    const sign = zone[0] === "-" ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2, 4));
    if (oh > 23 || om > 59) return null;
    offset = sign * (oh * 60 + om);
  }
  const t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms) - offset * 60_000;
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  return new Date(t);
}

const UNITS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86_400, week: 604_800 };

/** "1 hour", "15 minutes", "2 days" -> seconds; null when malformed. */
export function parseInterval(text: string): number | null {
  const m = /^\s*(\d+)\s*([a-z]+?)s?\s*$/i.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = UNITS[m[2]!.toLowerCase()];
  return unit && n > 0 ? n * unit : null;
}

const timestamp = (field: string) =>
  z.string({ error: `${field} must be an ISO 8601 timestamp string` }).transform((v, ctx) => {
    const d = parseTimestamp(v);
    if (!d) {
      ctx.addIssue({ code: "custom", message: `${field} ${JSON.stringify(v)} is not an ISO 8601 timestamp (e.g. 2026-11-23T10:00:00Z, +01:00, -0500)` });
      return z.NEVER;
    }
    return d;
  });

const interval = z.string({ error: 'interval must be a string such as "1 hour" or "15 minutes"' }).transform((v, ctx) => {
  const s = parseInterval(v);
  if (!s) {
    ctx.addIssue({ code: "custom", message: `interval ${JSON.stringify(v)} must be a count and a unit: second, minute, hour, day or week (e.g. "1 hour", "15 minutes")` });
    return z.NEVER;
  }
  return s;
});

const functions = z
  .array(z.enum(FUNCTIONS, { error: `must be one of ${FUNCTIONS.join(", ")}` }), { error: `functions must be an array of ${FUNCTIONS.join(", ")}` })
  .min(1, { error: "functions must name at least one function" })
  .default(["COUNT"]);
const order = z.enum(ORDERS, { error: "order must be ASCENDING or DESCENDING" }).default("ASCENDING");
const names = (what: string) => z.array(z.string({ error: `${what} must be strings` }).min(1), { error: `${what} must be an array of strings` }).min(1, { error: `${what} must name at least one` });

/** The fields both aggregate forms share. */
const windowFields = {
  sensors: names("sensors"),
  startTime: timestamp("startTime").optional(),
  endTime: timestamp("endTime").optional(),
  interval,
  functions,
  fillEmptyWindows: z.boolean({ error: "fillEmptyWindows must be true or false" }).default(false),
  order,
};

export const aggregateBody = z.object({
  deviceId: z.string({ error: "deviceId must be a string" }).min(1),
  streamId: z.string().nullable().optional(),
  ...windowFields,
});

export const streamAggregateBody = z.object({
  streamId: z.string({ error: "streamId must be a string" }).min(1),
  deviceId: z.string().nullable().optional(),
  ...windowFields,
});

export const sensorQueryBody = z.object({
  deviceId: z.string({ error: "deviceId must be a string" }).min(1),
  sensors: names("sensors"),
  startTime: timestamp("startTime"),
  endTime: timestamp("endTime"),
  withImages: z.boolean().default(false),
  withTracks: z.boolean().default(false),
  limit: z.number({ error: "limit must be a whole number from 1 to 10000" }).int().min(1).max(10_000).default(1000),
  order,
  pageToken: z.string().optional(),
});

/** Parses a body with a schema; 400 naming every problem. */
export function parse<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const r = schema.safeParse(body ?? {});
  if (r.success) return r.data;
  const details = r.error.issues.map((i) => ({ field: i.path.join(".") || "(body)", problem: i.message }));
  throw new ObscuraError("INVALID_ARGUMENT", details.map((d) => `${d.field}: ${d.problem}`).join("; "), { details });
}

/** A required query timestamp (startTime / endTime). */
export function queryTime(url: URL, name: string, required = true): Date | null {
  const raw = url.searchParams.get(name);
  if (raw === null) {
    if (required) throw new ObscuraError("INVALID_ARGUMENT", `${name} is a required query parameter (an ISO 8601 timestamp)`, { details: [{ field: name, problem: "is required" }] });
    return null;
  }
  const d = parseTimestamp(raw);
  if (!d) throw new ObscuraError("INVALID_ARGUMENT", `${name} ${JSON.stringify(raw)} is not an ISO 8601 timestamp (e.g. 2026-11-23T10:00:00Z, +01:00, -0500)`, { details: [{ field: name, problem: "is not a timestamp" }] });
  return d;
}

function range(start: Date, end: Date): void {
  if (end.getTime() <= start.getTime()) throw new ObscuraError("INVALID_ARGUMENT", `endTime (${end.toISOString()}) must be after startTime (${start.toISOString()})`, { details: [{ field: "endTime", problem: "is not after startTime" }] });
}

/** Windows in one query at most (a year of minutes is too many). */
export const MAX_WINDOWS = 100_000;

const iso = (ms: number) => new Date(ms).toISOString();

const VALUE: Record<AggregateFunction, string> = {
  COUNT: "count",
  SUM: "sum",
  AVERAGE: "avg",
  MIN: "min",
  MAX: "max",
  MEDIAN: "p50",
  QUARTILE_1: "p25",
  QUARTILE_2: "p50",
  QUARTILE_3: "p75",
};

interface AggregateRow {
  k1: string;
  k2: string;
  direction: string | null;
  ws: number;
  count: number;
  sum: number | null;
  avg: number | null;
  min: number | null;
  max: number | null;
  p25: number | null;
  p50: number | null;
  p75: number | null;
}

/**
 * Windowed aggregates of `value` grouped by (k1, k2, direction, window). `keys` are the SQL
 * columns of the group (device + sensor name, or stream + sensor id), `where` the filter.
 */
async function aggregate(o: { keys: [SQL, SQL]; where: SQL; start: Date; end: Date; seconds: number; fill: boolean; order: "ASCENDING" | "DESCENDING"; wanted: Array<[string, string]>; functions: readonly AggregateFunction[] }): Promise<AggregateRow[]> {
  const windows = Math.ceil((o.end.getTime() - o.start.getTime()) / 1000 / o.seconds);
  if (windows > MAX_WINDOWS) {
    throw new ObscuraError("INVALID_ARGUMENT", `the time range holds ${windows} windows of ${o.seconds} s; at most ${MAX_WINDOWS} per query: use a longer interval or a shorter range`, { details: [{ field: "interval", problem: "too many windows" }] });
  }
  const step = sql.raw(`'${o.seconds} seconds'::interval`);
  // percentiles sort each window's values: computed only when a function asks for them
  const wanted = new Set(o.functions.map((f) => VALUE[f]));
  const percentile = (q: number, name: "p25" | "p50" | "p75") => (wanted.has(name) ? sql.raw(`percentile_cont(${q}) within group (order by value)::float8 as ${name}`) : sql.raw(`null::float8 as ${name}`));
  const dir = sql.raw(o.order === "DESCENDING" ? "desc" : "asc");
  const agg = sql`
    select ${o.keys[0]} as k1, ${o.keys[1]} as k2, direction,
      date_bin(${step}, time_collected, ${o.start.toISOString()}::timestamptz) as w,
      count(*)::int as count, sum(value)::float8 as sum, avg(value)::float8 as avg, min(value)::float8 as min, max(value)::float8 as max,
      ${percentile(0.25, "p25")}, ${percentile(0.5, "p50")}, ${percentile(0.75, "p75")}
    from sensor_events
    where ${o.where} and time_collected >= ${o.start.toISOString()}::timestamptz and time_collected < ${o.end.toISOString()}::timestamptz
    group by 1, 2, 3, 4`;
  const d = await database();
  let query: SQL;
  if (!o.fill) {
    query = sql`select k1, k2, direction, (extract(epoch from w) * 1000)::float8 as ws, count, sum, avg, min, max, p25, p50, p75 from (${agg}) a order by w ${dir}, k2, direction nulls first`;
  } else {
    // every group seen (or asked for) x every window of the range; windows without events count 0
    const asked = o.wanted.length ? sql.join(o.wanted.map(([a, b]) => sql`(${a}::text, ${b}::text, null::text)`), sql`, `) : null;
    query = sql`
      with a as (${agg}),
      g as (select distinct k1, k2, direction from a ${asked ? sql`union select * from (values ${asked}) v(k1, k2, direction) where not exists (select 1 from a where a.k1 = v.k1 and a.k2 = v.k2)` : sql``}),
      s as (select generate_series(${o.start.toISOString()}::timestamptz, ${o.end.toISOString()}::timestamptz - interval '1 microsecond', ${step}) as w)
      select g.k1, g.k2, g.direction, (extract(epoch from s.w) * 1000)::float8 as ws,
        coalesce(a.count, 0)::int as count, a.sum, a.avg, a.min, a.max, a.p25, a.p50, a.p75
      from g cross join s left join a on a.k1 = g.k1 and a.k2 = g.k2 and a.direction is not distinct from g.direction and a.w = s.w
      order by s.w ${dir}, g.k2, g.direction nulls first`;
  }
  return (await d.execute(query)).rows as unknown as AggregateRow[];
}

function windowRecord(r: AggregateRow, fns: readonly AggregateFunction[], seconds: number, end: Date) {
  return {
    windowStart: iso(r.ws),
    windowEnd: iso(Math.min(r.ws + seconds * 1000, end.getTime())),
    values: fns.map((f) => ({ function: f, value: f === "COUNT" ? r.count : ((r[VALUE[f] as keyof AggregateRow] as number | null) ?? null) })),
  };
}

/** POST /data/query?startTime&endTime: windows per device, sensor name and direction. */
export async function deviceAggregate(url: URL, body: unknown) {
  const start = queryTime(url, "startTime")!;
  const end = queryTime(url, "endTime")!;
  const b = parse(aggregateBody, body);
  for (const [k, v, q] of [["startTime", b.startTime, start], ["endTime", b.endTime, end]] as const) {
    if (v && v.getTime() !== q.getTime()) throw new ObscuraError("INVALID_ARGUMENT", `${k} in the body (${v.toISOString()}) differs from the ${k} query parameter (${q.toISOString()})`, { details: [{ field: k, problem: "differs from the query parameter" }] });
  }
  range(start, end);
  const where = sql`device_id = ${b.deviceId} and sensor_name in (${sql.join(b.sensors.map((s) => sql`${s}`), sql`, `)}) ${b.streamId ? sql`and stream_id = ${b.streamId}` : sql``}`;
  const rows = await aggregate({ keys: [sql`device_id`, sql`sensor_name`], where, start, end, seconds: b.interval, fill: b.fillEmptyWindows, order: b.order, wanted: b.sensors.map((s) => [b.deviceId, s]), functions: b.functions });
  return rows.map((r) => ({ deviceId: r.k1, sensorName: r.k2, direction: r.direction, ...windowRecord(r, b.functions, b.interval, end) }));
}

/** POST /data/stream/aggregate/query: windows per stream, sensor id and direction; times optional. */
export async function streamAggregate(body: unknown) {
  const b = parse(streamAggregateBody, body);
  const end = b.endTime ?? new Date();
  const start = b.startTime ?? new Date(end.getTime() - b.interval * 1000);
  range(start, end);
  const where = sql`stream_id = ${b.streamId} and sensor_id in (${sql.join(b.sensors.map((s) => sql`${s}`), sql`, `)}) ${b.deviceId ? sql`and device_id = ${b.deviceId}` : sql``}`;
  const rows = await aggregate({ keys: [sql`stream_id`, sql`sensor_id`], where, start, end, seconds: b.interval, fill: b.fillEmptyWindows, order: b.order, wanted: b.sensors.map((s) => [b.streamId, s]), functions: b.functions });
  return rows.map((r) => ({ streamId: r.k1, sensorId: r.k2, direction: r.direction, ...windowRecord(r, b.functions, b.interval, end) }));
}

interface EventRow {
  id: string;
  workspace_id: string;
  device_id: string;
  stream_id: string;
  sensor_id: string;
  sensor_name: string;
  direction: string | null;
  object_type: string;
  unique_id: number | null;
  confidence: number | null;
  model: string | null;
  value: number;
  t: number;
  data: Record<string, unknown>;
  track: unknown[] | null;
  bounding_box_image: string | null;
  frame_image: string | null;
}

const EVENT_COLUMNS = sql`id, workspace_id, device_id, stream_id, sensor_id, sensor_name, direction, object_type, unique_id, confidence, model, value, (extract(epoch from time_collected) * 1000)::float8 as t, data, track, bounding_box_image, frame_image`;

/** POST /data/sensor/query: flattened records, `limit` per page; the next page's token comes back in a header. */
export async function sensorRecords(body: unknown): Promise<{ records: unknown[]; nextPageToken: string | null }> {
  const b = parse(sensorQueryBody, body);
  range(b.startTime, b.endTime);
  let after: { t: number; id: string } | null = null;
  if (b.pageToken) {
    try {
      after = JSON.parse(Buffer.from(b.pageToken, "base64url").toString("utf8")) as { t: number; id: string };
      if (typeof after.t !== "number" || typeof after.id !== "string") throw new Error("shape");
    } catch {
      throw new ObscuraError("INVALID_ARGUMENT", "pageToken is not a token this API gave out (X-Next-Page-Token of the previous page)", { details: [{ field: "pageToken", problem: "is not valid" }] });
    }
  }
  const desc = b.order === "DESCENDING";
  const cursor = after
    ? desc
      ? sql`and (time_collected, id) < (to_timestamp(${after.t / 1000}), ${after.id})`
      : sql`and (time_collected, id) > (to_timestamp(${after.t / 1000}), ${after.id})`
    : sql``;
  const d = await database();
  const rows = (
    await d.execute(sql`
      select ${EVENT_COLUMNS} from sensor_events
      where device_id = ${b.deviceId} and sensor_name in (${sql.join(b.sensors.map((s) => sql`${s}`), sql`, `)})
        and time_collected >= ${b.startTime.toISOString()}::timestamptz and time_collected < ${b.endTime.toISOString()}::timestamptz ${cursor}
      order by time_collected ${sql.raw(desc ? "desc" : "asc")}, id ${sql.raw(desc ? "desc" : "asc")}
      limit ${b.limit + 1}`)
  ).rows as unknown as EventRow[];
  const page = rows.slice(0, b.limit);
  const last = page[page.length - 1];
  return {
    records: page.map((r) => ({
      id: r.id,
      deviceId: r.device_id,
      objectType: r.object_type,
      sensorName: r.sensor_name,
      direction: r.direction,
      timeCollected: iso(r.t),
      value: r.value,
      boundingBoxImage: b.withImages ? r.bounding_box_image : null,
      frameImage: b.withImages ? r.frame_image : null,
      track: b.withTracks ? r.track : null,
    })),
    nextPageToken: rows.length > b.limit && last ? Buffer.from(JSON.stringify({ t: last.t, id: last.id })).toString("base64url") : null,
  };
}

/** GET /data/id/<workspace_id>/<event_id>: the event (an array of one, or 404). */
export async function eventById(workspaceId: string, eventId: string) {
  const d = await database();
  const rows = (await d.execute(sql`select ${EVENT_COLUMNS} from sensor_events where workspace_id = ${workspaceId} and id = ${eventId}`)).rows as unknown as EventRow[];
  if (!rows.length) throw new ObscuraError("NOT_FOUND", `no event ${eventId} in workspace ${workspaceId}`);
  return rows.map((r) => ({
    deviceId: r.device_id,
    objectType: r.object_type,
    timeCollected: iso(r.t),
    uniqueId: r.unique_id,
    confidence: r.confidence,
    model: r.model,
    length: (r.data.length as number | undefined) ?? null,
    speed: (r.data.speed as number | undefined) ?? null,
    sensorData: { sensorName: r.sensor_name, objectClass: r.object_type, direction: r.direction, ...r.data },
    track: r.track,
    bboxImg: r.bounding_box_image,
    frameImg: r.frame_image,
  }));
}

/** GET /device/<id>/sensors and /workspace/<id>/sensors: sensors with events in the range. */
export async function sensorListing(url: URL, by: "device" | "workspace", id: string) {
  const start = queryTime(url, "startTime")!;
  const end = queryTime(url, "endTime")!;
  range(start, end);
  const d = await database();
  const rows = (
    await d.execute(sql`
      select device_id, stream_id, sensor_name, direction, object_type, count(*)::int as count, (extract(epoch from max(time_collected)) * 1000)::float8 as last
      from sensor_events
      where ${by === "device" ? sql`device_id = ${id}` : sql`workspace_id = ${id}`}
        and time_collected >= ${start.toISOString()}::timestamptz and time_collected < ${end.toISOString()}::timestamptz
      group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4 nulls first, 5`)
  ).rows as unknown as Array<{ device_id: string; stream_id: string; sensor_name: string; direction: string | null; object_type: string; count: number; last: number }>;
  return rows.map((r) => ({ deviceId: r.device_id, streamId: r.stream_id, sensorName: r.sensor_name, direction: r.direction, objectType: r.object_type, count: r.count, lastTimeCollected: iso(r.last) }));
}

/** GET /data/stream/<stream_id>/latest[?sensorId]: the newest record of the stream (404 when none). */
export async function latestStreamRecord(streamId: string, sensorId: string | null) {
  const d = await database();
  const rows = (
    await d.execute(sql`select ${EVENT_COLUMNS} from sensor_events where stream_id = ${streamId} ${sensorId ? sql`and sensor_id = ${sensorId}` : sql``} order by time_collected desc, id desc limit 1`)
  ).rows as unknown as EventRow[];
  const r = rows[0];
  if (!r) throw new ObscuraError("NOT_FOUND", `no records for stream ${streamId}${sensorId ? ` and sensor ${sensorId}` : ""}`);
  return {
    workspaceId: r.workspace_id,
    streamId: r.stream_id,
    id: r.id,
    sensorId: r.sensor_id,
    deviceId: r.device_id,
    direction: r.direction,
    objectType: r.object_type,
    timeCollected: iso(r.t),
    value: r.value,
    meta: { ...r.data, sensorName: r.sensor_name, frameImage: r.frame_image, boundingBoxImage: r.bounding_box_image },
  };
}
