/**
 * The database schema (drizzle-orm). Migrations in drizzle/ are generated from this file with
 * `npm run db:generate` and applied on start, on PGlite and on PostgreSQL alike.
 * The job queue itself lives in pg-boss's own schema (`pgboss`), managed by pg-boss.
 */
import { sql } from "drizzle-orm";
import { boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, real, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

/** One row per long-running operation (videos:process / images:process). */
export const operations = pgTable(
  "operations",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id").notNull(),
    kind: text("kind", { enum: ["video", "image"] }).notNull(),
    /** queued -> running -> succeeded | failed. `done` mirrors the two final states. */
    status: text("status", { enum: ["queued", "running", "succeeded", "failed"] }).notNull(),
    /** What the worker is doing now (fetching, probing, hashing, rendering, ...), for logs and progress. */
    stage: text("stage"),
    inputUri: text("input_uri").notNull(),
    outputUri: text("output_uri"),
    sessionId: text("session_id"),
    /** The validated, normalised request body. */
    request: jsonb("request").notNull(),
    progressPercent: real("progress_percent").notNull().default(0),
    startTime: timestamp("start_time", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    updateTime: timestamp("update_time", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    done: boolean("done").notNull().default(false),
    response: jsonb("response"),
    error: jsonb("error"),
    cancelRequested: boolean("cancel_requested").notNull().default(false),
    attempts: integer("attempts").notNull().default(0),
    jobId: text("job_id"),
    worker: text("worker"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("operations_project_idx").on(t.projectId), index("operations_session_idx").on(t.sessionId)],
);

/** One row per video session (the unit the editor shows); its state lives at `stateUri`. */
export const sessions = pgTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id").notNull(),
    inputUri: text("input_uri").notNull(),
    /** Where the session's internal state lives (a prefix URI ending with '/'); null once dropped. */
    stateUri: text("state_uri"),
    media: jsonb("media"),
    hashes: jsonb("hashes"),
    lastOperationId: text("last_operation_id"),
    /** Usernames of reviewers who may open this session (the requests' `acl`, merged); admins see all. */
    acl: jsonb("acl").$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    /** Bumped by every write of the tracks (a detection run or an editor's save): saves name the version they edited. */
    version: integer("version").notNull().default(0),
    editedAt: timestamp("edited_at", { withTimezone: true, mode: "date" }),
    /** Who saved last: a username, a token's name, or "detection". */
    editedBy: text("edited_by"),
    /** Tracks per object type ({"face": 12, "licensePlate": 3}), for lists without reading the state. */
    trackCounts: jsonb("track_counts").$type<Record<string, number>>(),
    droppedAt: timestamp("dropped_at", { withTimezone: true, mode: "date" }),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("sessions_project_idx").on(t.projectId), index("sessions_input_idx").on(t.inputUri)],
);

const at = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/**
 * People who sign in to the web UI (docs/admin.md). Usernames are stored lower-case and unique
 * among users not deleted; a deleted user keeps its row (status "deleted") so past edits keep
 * their author's name.
 */
export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    username: text("username").notNull(),
    displayName: text("display_name"),
    /** argon2id PHC string. */
    passwordHash: text("password_hash").notNull(),
    role: text("role", { enum: ["admin", "reviewer"] }).notNull(),
    status: text("status", { enum: ["active", "disabled", "deleted"] }).notNull().default("active"),
    /** Failed sign-ins since the last success; at the limit the account locks until `lockedUntil`. */
    failedSignIns: integer("failed_sign_ins").notNull().default(0),
    lockedUntil: at("locked_until"),
    lastSignInAt: at("last_sign_in_at"),
    passwordChangedAt: at("password_changed_at"),
    createdAt: at("created_at").notNull().defaultNow(),
    updatedAt: at("updated_at").notNull().defaultNow(),
    deletedAt: at("deleted_at"),
  },
  (t) => [uniqueIndex("users_username_live_idx").on(t.username).where(sql`status <> 'deleted'`)],
);

/**
 * API credentials created by admins: `bearer` for /api/v1, `access` (X-Access-Token) for the
 * detection API with a monthly quota, `apikey` (X-API-Key) for the vehicle and data APIs. Only a
 * SHA-256 of the token is stored (tokens are 256-bit random); `prefix` identifies it in lists.
 */
export const apiTokens = pgTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    kind: text("kind", { enum: ["bearer", "access", "apikey"] }).notNull(),
    prefix: text("prefix").notNull(),
    tokenHash: text("token_hash").notNull(),
    /** Calls per calendar month (UTC) for access tokens; null: no quota. */
    monthlyQuota: integer("monthly_quota"),
    createdBy: text("created_by"),
    createdAt: at("created_at").notNull().defaultNow(),
    lastUsedAt: at("last_used_at"),
    revokedAt: at("revoked_at"),
    revokedBy: text("revoked_by"),
  },
  (t) => [uniqueIndex("api_tokens_hash_idx").on(t.tokenHash), index("api_tokens_kind_idx").on(t.kind)],
);

/** Calls per token per month ("2026-11"), counted atomically for quotas. */
export const tokenUsage = pgTable(
  "token_usage",
  {
    tokenId: text("token_id").notNull(),
    month: text("month").notNull(),
    calls: integer("calls").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.month] })],
);

/** Admin actions and sign-ins, newest first in /admin. `actor` is a username or "system". */
export const auditLog = pgTable(
  "audit_log",
  {
    id: text("id").primaryKey(),
    at: at("at").notNull().defaultNow(),
    actor: text("actor"),
    action: text("action").notNull(),
    target: text("target"),
    ip: text("ip"),
    details: jsonb("details"),
  },
  (t) => [index("audit_log_at_idx").on(t.at)],
);

/** Sign-in throttling per client address (per-user lockout is on `users`). */
export const signInThrottle = pgTable("sign_in_throttle", {
  key: text("key").primaryKey(),
  failures: integer("failures").notNull().default(0),
  windowStart: at("window_start").notNull().defaultNow(),
  blockedUntil: at("blocked_until"),
});

/** Licences installed (docs/licensing.md): the signed document as given; the newest active one applies. */
export const licenses = pgTable("licenses", {
  id: text("id").primaryKey(),
  document: text("document").notNull(),
  installedAt: at("installed_at").notNull().defaultNow(),
  installedBy: text("installed_by"),
  active: boolean("active").notNull().default(true),
});

/** Server-wide settings shared by every API server and worker (setup state, the session-signing secret). */
export const settings = pgTable("settings", {
  key: text("key").primaryKey(),
  value: jsonb("value").notNull(),
  updatedAt: at("updated_at").notNull().defaultNow(),
});

export type OperationRow = typeof operations.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type ApiTokenRow = typeof apiTokens.$inferSelect;

/**
 * Analytics events (issue 10; docs/data-api.md): one row per sensor event of a pipeline (a line
 * crossing, a speed, a presence change...). `value` is what aggregations run on; the rest of the
 * event (presence data, speed, length, the pipeline's own fields) sits in `data`.
 */
export const sensorEvents = pgTable(
  "sensor_events",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    deviceId: text("device_id").notNull(),
    streamId: text("stream_id").notNull(),
    sensorId: text("sensor_id").notNull(),
    sensorName: text("sensor_name").notNull(),
    /** COUNT, SPEED, FISH, PRESENCE, COLLISION. */
    sensorType: text("sensor_type").notNull(),
    /** NORTH / SOUTH for line sensors; null for regions. */
    direction: text("direction"),
    objectType: text("object_type").notNull(),
    /** The tracked object's id within its stream. */
    uniqueId: integer("unique_id"),
    confidence: real("confidence"),
    model: text("model"),
    value: doublePrecision("value").notNull(),
    timeCollected: at("time_collected").notNull(),
    data: jsonb("data").$type<Record<string, unknown>>().notNull().default({}),
    track: jsonb("track").$type<unknown[]>(),
    boundingBoxImage: text("bounding_box_image"),
    frameImage: text("frame_image"),
  },
  (t) => [
    index("sensor_events_device_idx").on(t.deviceId, t.sensorName, t.timeCollected),
    index("sensor_events_stream_idx").on(t.streamId, t.sensorId, t.timeCollected),
    index("sensor_events_workspace_idx").on(t.workspaceId, t.timeCollected),
  ],
);

/** Recorded clips and saved images of analytics streams (docs/data-api.md#media). */
export const media = pgTable(
  "media",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    streamId: text("stream_id").notNull(),
    deviceId: text("device_id").notNull(),
    timeCollected: at("time_collected").notNull(),
    /** IMAGE or VIDEO. */
    mediaType: text("media_type").notNull(),
    /** Storage URI (file://, s3://, Azure SAS URL). */
    uri: text("uri").notNull(),
    contentType: text("content_type").notNull(),
    captureType: text("capture_type").notNull().default("RAW"),
    startTime: at("start_time").notNull(),
    durationMs: integer("duration_ms").notNull().default(0),
    objects: jsonb("objects").$type<Array<{ objectId: string }>>().notNull().default([]),
    events: jsonb("events").$type<Array<{ eventId: string }>>().notNull().default([]),
  },
  (t) => [index("media_stream_idx").on(t.streamId, t.timeCollected), index("media_type_idx").on(t.streamId, t.mediaType, t.timeCollected)],
);

/** Analytics pipelines started over REST (docs/pipeline.md#rest); each runs as a job in a worker. */
export const pipelines = pgTable(
  "pipelines",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** Who created it (user id or token id). */
    owner: text("owner").notNull(),
    /** QUEUED, RUNNING, STOPPING, STOPPED, SUCCEEDED, FAILED. */
    state: text("state").notNull(),
    entryPoint: text("entry_point").notNull(),
    /** The configuration as given (secrets included: never returned, see redactedConfig). */
    config: jsonb("config").$type<Record<string, unknown>>().notNull(),
    stats: jsonb("stats").$type<Record<string, unknown>>().notNull().default({}),
    error: text("error"),
    worker: text("worker"),
    attempts: integer("attempts").notNull().default(0),
    stopRequested: boolean("stop_requested").notNull().default(false),
    createTime: at("create_time").notNull(),
    startTime: at("start_time"),
    endTime: at("end_time"),
    updateTime: at("update_time").notNull(),
  },
  (t) => [index("pipelines_state_idx").on(t.state, t.createTime)],
);
