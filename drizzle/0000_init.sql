CREATE TABLE "operations" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"stage" text,
	"input_uri" text NOT NULL,
	"output_uri" text,
	"session_id" text,
	"request" jsonb NOT NULL,
	"progress_percent" real DEFAULT 0 NOT NULL,
	"start_time" timestamp with time zone DEFAULT now() NOT NULL,
	"update_time" timestamp with time zone DEFAULT now() NOT NULL,
	"done" boolean DEFAULT false NOT NULL,
	"response" jsonb,
	"error" jsonb,
	"cancel_requested" boolean DEFAULT false NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"job_id" text,
	"worker" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"input_uri" text NOT NULL,
	"state_uri" text,
	"media" jsonb,
	"hashes" jsonb,
	"last_operation_id" text,
	"dropped_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "operations_project_idx" ON "operations" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "operations_session_idx" ON "operations" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "sessions_project_idx" ON "sessions" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "sessions_input_idx" ON "sessions" USING btree ("input_uri");