/**
 * POST /api/v1/projects/{projectId}/uploads/{uploadId}:process: what to do with a finished upload.
 * Only the shape is checked here; the values go through the videos:process schema, so the errors
 * are the API's own.
 */
import { z } from "zod";
import { named } from "./registry";

export const uploadProcessRequestSchema = named(
  "UploadProcessRequest",
  z.strictObject({
    features: z.array(z.string({ error: "features items must be feature names" }), { error: "features must be an array of feature names" }).min(1, { error: "features must name at least one feature" }),
    acl: z.array(z.string()).optional(),
    videoContext: z.record(z.string(), z.unknown()).optional(),
  }),
  "Body of POST /api/v1/projects/{projectId}/uploads/{uploadId}:process: the features and settings of the process request (as POST videos:process).",
);
export type UploadProcessRequest = z.infer<typeof uploadProcessRequestSchema>;
