/**
 * The session API the review editor uses (docs/sessions.md): the tracks a save sends, validated
 * before anything is written. Names follow the session state (docs/state.md).
 */
import { z } from "zod";
import { named } from "./registry";
import { renderConfigSchema } from "./video";

export const OBJECT_TYPES = ["face", "head", "person", "vehicle", "licensePlate", "id", "screen", "document"] as const;

const finite = (what: string) => z.number({ error: `${what} must be a number` }).refine(Number.isFinite, { error: `${what} must be a finite number` });
const frameNumber = (what: string) => z.number({ error: `${what} must be a frame number` }).int({ error: `${what} must be a whole frame number` }).min(0, { error: `${what} must be 0 or more` });

const boxSchema = z.strictObject({
  x: finite("box.x"),
  y: finite("box.y"),
  width: finite("box.width").refine((v) => v > 0, { error: "box.width must be more than 0" }),
  height: finite("box.height").refine((v) => v > 0, { error: "box.height must be more than 0" }),
});

const keyframeSchema = z.strictObject({
  frame: frameNumber("keyframe.frame"),
  box: boxSchema,
  score: z.number().min(0).max(1).nullable(),
  source: z.enum(["detected", "predicted", "manual"], { error: "keyframe.source must be detected, predicted or manual" }),
});

export const trackSchema = named(
  "Track",
  z
    .strictObject({
      id: z.number().int().positive({ error: "track id must be a whole number from 1" }),
      type: z.enum(OBJECT_TYPES, { error: `track type must be one of ${OBJECT_TYPES.join(", ")}` }),
      label: z.string().max(100).optional(),
      firstFrame: frameNumber("firstFrame"),
      lastFrame: frameNumber("lastFrame"),
      keyframes: z.array(keyframeSchema).min(1, { error: "a track needs at least one keyframe" }).max(200_000),
      enabled: z.boolean().optional(),
      manual: z.boolean().optional(),
      reviewed: z.boolean().optional(),
    })
    .superRefine((t, ctx) => {
      if (t.lastFrame < t.firstFrame) ctx.addIssue({ code: "custom", path: ["lastFrame"], message: `lastFrame (${t.lastFrame}) must not be before firstFrame (${t.firstFrame})` });
      for (let i = 1; i < t.keyframes.length; i++) {
        if (t.keyframes[i]!.frame <= t.keyframes[i - 1]!.frame) {
          ctx.addIssue({ code: "custom", path: ["keyframes", i, "frame"], message: "keyframes must be sorted by frame, one per frame" });
          break;
        }
      }
      const first = t.keyframes[0]?.frame;
      const last = t.keyframes.at(-1)?.frame;
      if (first !== undefined && (first < t.firstFrame || last! > t.lastFrame)) {
        ctx.addIssue({ code: "custom", path: ["keyframes"], message: `keyframes must lie within firstFrame..lastFrame (${t.firstFrame}..${t.lastFrame})` });
      }
    }),
);

export const saveTracksRequestSchema = named(
  "SaveTracksRequest",
  z
    .strictObject({
      version: z.number({ error: "version must be the session version the edits were made on" }).int().min(0),
      tracks: z.array(trackSchema, { error: "tracks must be an array of tracks" }).max(100_000, { error: "tracks must have at most 100000 items" }),
    })
    .superRefine((v, ctx) => {
      const seen = new Set<number>();
      v.tracks.forEach((t, i) => {
        if (seen.has(t.id)) ctx.addIssue({ code: "custom", path: ["tracks", i, "id"], message: `track id ${t.id} is used twice` });
        seen.add(t.id);
      });
    }),
  "Body of PUT /api/v1/projects/{projectId}/sessions/{sessionId}/tracks.",
);

export type SaveTracksRequest = z.infer<typeof saveTracksRequestSchema>;
export type EditorTrack = z.infer<typeof trackSchema>;
export type EditorKeyframe = EditorTrack["keyframes"][number];
export type EditorBox = EditorKeyframe["box"];

export const exportRequestSchema = named(
  "SessionExportRequest",
  z.strictObject({ renderConfig: renderConfigSchema.optional() }),
  "Body of POST /api/v1/projects/{projectId}/sessions/{sessionId}/export: the render settings (as videoContext.renderConfig).",
);
export type ExportRequest = z.infer<typeof exportRequestSchema>;

const queryInt = (what: string, min: number, max: number) =>
  z.coerce
    .number({ error: `${what} must be a number` })
    .int({ error: `${what} must be a whole number` })
    .min(min, { error: `${what} must be ${min} or more` })
    .max(max, { error: `${what} must be at most ${max}` });

/** Query of GET .../sessions/{sessionId}/frame: a frame, optionally cropped to a box, scaled to a height. */
export const frameRequestSchema = z
  .strictObject({
    frame: queryInt("frame", 0, 100_000_000),
    x: z.coerce.number().min(0).optional(),
    y: z.coerce.number().min(0).optional(),
    w: z.coerce.number().positive().optional(),
    h: z.coerce.number().positive().optional(),
    height: queryInt("height", 16, 720).default(64),
  })
  .refine((q) => (q.w == null) === (q.h == null), { error: "give both w and h (the crop box) or neither", path: ["w"] });

/** Body of POST .../sessions/{sessionId}/tracks:follow: follow the content of a box from a frame. */
export const followRequestSchema = named(
  "FollowRequest",
  z.strictObject({
    frame: frameNumber("frame"),
    box: boxSchema,
    direction: z.enum(["both", "forward", "backward"], { error: "direction must be both, forward or backward" }).optional(),
    maxFrames: z
      .number({ error: "maxFrames must be a number of frames" })
      .int({ error: "maxFrames must be a whole number" })
      .min(1, { error: "maxFrames must be at least 1" })
      .max(3000, { error: "maxFrames must be at most 3000" })
      .optional(),
  }),
  "Body of POST /api/v1/projects/{projectId}/sessions/{sessionId}/tracks:follow.",
);
