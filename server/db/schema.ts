/**
 * The database schema (drizzle-orm). Migrations in drizzle/ are generated from this file with
 * `npm run db:generate` and applied on start, on PGlite and on PostgreSQL alike.
 * The job queue itself lives in pg-boss's own schema (`pgboss`), managed by pg-boss.
 */
import { boolean, index, integer, jsonb, pgTable, real, text, timestamp } from "drizzle-orm/pg-core";

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
    droppedAt: timestamp("dropped_at", { withTimezone: true, mode: "date" }),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [index("sessions_project_idx").on(t.projectId), index("sessions_input_idx").on(t.inputUri)],
);

export type OperationRow = typeof operations.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
