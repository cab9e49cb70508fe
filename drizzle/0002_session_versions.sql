ALTER TABLE "sessions" ADD COLUMN "version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "edited_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "edited_by" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "track_counts" jsonb;