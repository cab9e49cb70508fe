CREATE TABLE "pipelines" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"owner" text NOT NULL,
	"state" text NOT NULL,
	"entry_point" text NOT NULL,
	"config" jsonb NOT NULL,
	"stats" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"error" text,
	"worker" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"stop_requested" boolean DEFAULT false NOT NULL,
	"create_time" timestamp with time zone NOT NULL,
	"start_time" timestamp with time zone,
	"end_time" timestamp with time zone,
	"update_time" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "pipelines_state_idx" ON "pipelines" USING btree ("state","create_time");