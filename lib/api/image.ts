/** The image process request (POST /api/v1/images:process), spec/redaction-api.md. */
import { z } from "zod";
import { named } from "./registry";
import {
  IMAGE_FEATURES,
  inputUriSchema,
  normaliseFeatures,
  notificationSpecs,
  type NotificationSpec,
  notificationsSchema,
  outputUriSchema,
  projectIdSchema,
  tagSchema,
  unitInterval,
  type Feature,
} from "./common";

export const imageRenderConfigSchema = named(
  "ImageRenderConfig",
  z.strictObject({
    exportMetadata: z
      .boolean({ error: "exportMetadata must be true or false" })
      .optional()
      .meta({ description: "Default false. Writes a JSON file of raw detection data next to the image (docs/state.md)." }),
    imageQuality: unitInterval("imageQuality").optional().meta({ description: "JPEG quality, default 0.65." }),
    leakCheck: z
      .boolean({ error: "leakCheck must be true or false" })
      .optional()
      .meta({
        description:
          "Default true. After MEDIA_RENDER, scan the written JPG again at a lower threshold and report objects found outside the redacted boxes (leakCount in the operation's response, leaks in the exported metadata; docs/rendering.md#leak-check). OBSCURA_LEAK_CHECK=0 turns it off server-wide.",
      }),
  }),
);

export const imageContextSchema = named("ImageContext", z.strictObject({ renderConfig: imageRenderConfigSchema.optional() }));

export const imageProcessRequestSchema = named(
  "ImageProcessRequest",
  z
    .strictObject({
      inputUri: inputUriSchema,
      features: z
        .array(z.enum(IMAGE_FEATURES, { error: `features items must be one of ${IMAGE_FEATURES.join(", ")}` }), {
          error: "features must be an array of feature names",
        })
        .min(1, { error: `features must name at least one of ${IMAGE_FEATURES.join(", ")}` })
        .max(32, { error: "features must have at most 32 items" }),
      outputUri: outputUriSchema,
      notifications: notificationsSchema.optional(),
      imageContext: imageContextSchema.optional(),
      projectId: projectIdSchema.optional(),
      tag: tagSchema.optional(),
    })
    .superRefine((v, ctx) => {
      if (typeof v.inputUri === "string" && v.inputUri.split("?")[0]!.endsWith("/")) {
        ctx.addIssue({ code: "custom", path: ["inputUri"], message: "inputUri must name a single image, not a folder (no trailing slash)" });
      }
    }),
  "Body of POST /api/v1/images:process (experimental).",
);

export type ImageProcessRequest = z.infer<typeof imageProcessRequestSchema>;

export interface ImageJobSpec {
  kind: "image";
  inputUri: string;
  /** The file the JPG is written to (a trailing-slash outputUri resolved to <dir>/image.jpg). */
  outputUri: string;
  features: Feature[];
  projectId: string;
  tag: Record<string, unknown> | null;
  notifications: NotificationSpec[];
  render: { exportMetadata: boolean; imageQuality: number; leakCheck?: boolean };
}

export function imageJobSpec(req: ImageProcessRequest, ids: { projectId: string; outputUri: string }): ImageJobSpec {
  const r = req.imageContext?.renderConfig ?? {};
  return {
    kind: "image",
    inputUri: req.inputUri,
    outputUri: ids.outputUri,
    features: normaliseFeatures(req.features),
    projectId: ids.projectId,
    tag: req.tag ?? null,
    notifications: notificationSpecs(req.notifications),
    render: { exportMetadata: r.exportMetadata ?? false, imageQuality: r.imageQuality ?? 0.65, leakCheck: r.leakCheck ?? true },
  };
}
