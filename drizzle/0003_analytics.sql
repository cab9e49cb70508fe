CREATE TABLE "media" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"stream_id" text NOT NULL,
	"device_id" text NOT NULL,
	"time_collected" timestamp with time zone NOT NULL,
	"media_type" text NOT NULL,
	"uri" text NOT NULL,
	"content_type" text NOT NULL,
	"capture_type" text DEFAULT 'RAW' NOT NULL,
	"start_time" timestamp with time zone NOT NULL,
	"duration_ms" integer DEFAULT 0 NOT NULL,
	"objects" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"events" jsonb DEFAULT '[]'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sensor_events" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"device_id" text NOT NULL,
	"stream_id" text NOT NULL,
	"sensor_id" text NOT NULL,
	"sensor_name" text NOT NULL,
	"sensor_type" text NOT NULL,
	"direction" text,
	"object_type" text NOT NULL,
	"unique_id" integer,
	"confidence" real,
	"model" text,
	"value" double precision NOT NULL,
	"time_collected" timestamp with time zone NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"track" jsonb,
	"bounding_box_image" text,
	"frame_image" text
);
--> statement-breakpoint
CREATE INDEX "media_stream_idx" ON "media" USING btree ("stream_id","time_collected");--> statement-breakpoint
CREATE INDEX "media_type_idx" ON "media" USING btree ("stream_id","media_type","time_collected");--> statement-breakpoint
CREATE INDEX "sensor_events_device_idx" ON "sensor_events" USING btree ("device_id","sensor_name","time_collected");--> statement-breakpoint
CREATE INDEX "sensor_events_stream_idx" ON "sensor_events" USING btree ("stream_id","sensor_id","time_collected");--> statement-breakpoint
CREATE INDEX "sensor_events_workspace_idx" ON "sensor_events" USING btree ("workspace_id","time_collected");