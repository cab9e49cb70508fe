/**
 * Pieces shared by the video and image process requests: features, storage URIs, notifications,
 * project ids, hashes. Rules and wording follow spec/redaction-api.md.
 */
import { z } from "zod";
import { uriProblem } from "@/lib/storage-uri";
import { named } from "./registry";

export const DETECTION_FEATURES = [
  "PERSON_DETECTION",
  "HEAD_DETECTION",
  "FACE_DETECTION",
  "VEHICLE_DETECTION",
  "LICENSE_PLATE_DETECTION",
  "ID_DETECTION",
  "SCREEN_DETECTION",
  "DOCUMENT_DETECTION",
] as const;

export const VIDEO_FEATURES = [
  "MEDIA_PREPARE",
  ...DETECTION_FEATURES,
  "SPEECH_TRANSCRIPTION",
  "MEDIA_RENDERING",
  "MEDIA_RENDER",
  "STATE_DROP",
] as const;

export const IMAGE_FEATURES = [...DETECTION_FEATURES, "MEDIA_RENDERING", "MEDIA_RENDER"] as const;

export type VideoFeature = (typeof VIDEO_FEATURES)[number];
export type ImageFeature = (typeof IMAGE_FEATURES)[number];
/** A feature after aliases are resolved (MEDIA_RENDERING -> MEDIA_RENDER). */
export type Feature = Exclude<VideoFeature, "MEDIA_RENDERING">;

export const HASH_TYPES = ["md5", "sha1", "sha256", "sha512"] as const;
export type HashType = (typeof HASH_TYPES)[number];

export const hashTypeList = (field: string) =>
  z
    .array(z.enum(HASH_TYPES, { error: `${field} items must be one of ${HASH_TYPES.join(", ")}` }))
    .min(1, { error: `${field} must name at least one of ${HASH_TYPES.join(", ")}` })
    .max(HASH_TYPES.length * 2, { error: `${field} must have at most ${HASH_TYPES.length * 2} items` });

/** 0..1 inclusive, named in messages. */
export const unitInterval = (what: string) =>
  z
    .number({ error: `${what} must be a number between 0 and 1` })
    .min(0, { error: `${what} must be between 0 and 1` })
    .max(1, { error: `${what} must be between 0 and 1` });

export const PROJECT_ID_RULE =
  "projectId must be 6-36 characters of a-z, 0-9 and '-', not ending with '-'";
export const projectIdSchema = named(
  "ProjectId",
  z
    .string({ error: PROJECT_ID_RULE })
    .regex(/^[a-z0-9-]{6,36}$/, { error: PROJECT_ID_RULE })
    .regex(/[^-]$/, { error: PROJECT_ID_RULE })
    .meta({ description: PROJECT_ID_RULE, examples: ["my-project-01"] }),
);

const MAX_URI_LENGTH = 8192;

const storageUriSchema = (field: "inputUri" | "outputUri", use: "input" | "output", description: string) =>
  z
    .string({ error: `${field} must be a string URI` })
    .min(1, { error: `${field} must not be empty` })
    .max(MAX_URI_LENGTH, { error: `${field} must be at most ${MAX_URI_LENGTH} characters` })
    .superRefine((v, ctx) => {
      const p = uriProblem(v, use);
      if (p) ctx.addIssue({ code: "custom", message: p });
    })
    .meta({ description });

export const inputUriSchema = storageUriSchema(
  "inputUri",
  "input",
  "An http(s) URL, `file:///<path>`, Windows `file:///C:/<path>`, `s3://<bucket>/<key>`, or an Azure blob URL with a SAS query. A trailing slash names a state bucket (video only).",
);

export const outputUriSchema = storageUriSchema(
  "outputUri",
  "output",
  "`file:///<path>`, Windows `file:///C:/<path>`, `s3://<bucket>/<key>`, or an Azure blob URL with a SAS query. With a trailing slash: a state bucket; without: the output file name.",
);

export const NOTIFICATION_EVENTS = ["START", "PROGRESS", "COMPLETION"] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

export const notificationConfigSchema = named(
  "NotificationConfig",
  z.strictObject({
    method: z
      .enum(["HTTP_POST"], { error: "method must be HTTP_POST (the only option)" })
      .default("HTTP_POST")
      .meta({ description: "HTTP_POST, the only option (default)." }),
    uri: z
      .url({ protocol: /^https?$/, error: "uri must be an http:// or https:// URL" })
      .max(MAX_URI_LENGTH, { error: `uri must be at most ${MAX_URI_LENGTH} characters` }),
    events: z
      .array(z.enum(NOTIFICATION_EVENTS, { error: `events items must be one of ${NOTIFICATION_EVENTS.join(", ")}` }))
      .min(1, { error: `events must name at least one of ${NOTIFICATION_EVENTS.join(", ")}` })
      .max(NOTIFICATION_EVENTS.length, { error: `events must have at most ${NOTIFICATION_EVENTS.length} items` }),
  }),
  "A webhook: an HTTP POST to `uri` for each event named in `events` (body: docs/webhooks.md).",
);

export const MAX_NOTIFICATIONS = 10;
export const notificationsSchema = z
  .array(notificationConfigSchema)
  .max(MAX_NOTIFICATIONS, { error: `notifications must have at most ${MAX_NOTIFICATIONS} items` });

export const tagSchema = z
  .record(z.string(), z.unknown(), { error: "tag must be a JSON object" })
  .meta({ description: "Caller-defined object returned in every notification." });

export interface NotificationSpec {
  method: "HTTP_POST";
  uri: string;
  events: NotificationEvent[];
}

/** Notifications with the default method filled in and repeated events removed. */
export function notificationSpecs(list: readonly { uri: string; events: NotificationEvent[] }[] | undefined): NotificationSpec[] {
  return (list ?? []).map((n) => ({ method: "HTTP_POST" as const, uri: n.uri, events: [...new Set(n.events)] }));
}

/** Every requested feature, aliases resolved, without duplicates, in request order. */
export function normaliseFeatures<T extends string>(features: readonly T[]): Feature[] {
  const out: Feature[] = [];
  for (const f of features) {
    const n = (f === "MEDIA_RENDERING" ? "MEDIA_RENDER" : f) as Feature;
    if (!out.includes(n)) out.push(n);
  }
  return out;
}
