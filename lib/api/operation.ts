/** The Operation resource (spec/redaction-api.md "Operation") and its name format. */
import { z } from "zod";
import { named } from "./registry";

export const PROGRESS_TYPE = "obscura.cloud.v1.Progress";
export const PROCESS_RESPONSE_TYPE = "obscura.cloud.v1.ProcessResponse";

export const operationSchema = named(
  "Operation",
  z.object({
    name: z.string().meta({ description: "projects/<project_id>/locations/<location_id>/operations/<operation_id>" }),
    metadata: z.object({
      "@type": z.literal(PROGRESS_TYPE),
      progress: z.object({
        inputUri: z.string(),
        progressPercent: z.number().min(0).max(100),
        startTime: z.string().meta({ description: "ISO 8601" }),
        updateTime: z.string().meta({ description: "ISO 8601" }),
      }),
    }),
    done: z.boolean(),
    response: z
      .object({
        "@type": z.literal(PROCESS_RESPONSE_TYPE),
        processResults: z.object({
          outputUri: z.string(),
          exportHashes: z
            .record(z.string(), z.string())
            .optional()
            .meta({ description: "renderConfig.exportHashes of the rendered file, hex digests by type (also in the state's hashes.json beside the original's)." }),
          leakCount: z
            .number()
            .int()
            .optional()
            .meta({ description: "Possible leaks the leak check found in the rendered output (absent when it did not run); docs/operations.md." }),
          leakCheck: z
            .object({
              framesScanned: z.number().int(),
              dismissedCount: z
                .number()
                .int()
                .optional()
                .meta({ description: "Weak face hits a second model (FaceMesh) saw no face in: listed in leaks.json `dismissed`, not counted in leakCount." }),
              threshold: z.object({
                seen: z.object({ objects: z.number(), inner: z.number() }),
                report: z.object({ objects: z.number(), inner: z.number() }),
              }),
              features: z.array(z.string()),
            })
            .optional()
            .meta({ description: "How the leak check ran: frames scanned, thresholds (hits kept at `seen`, leaks reported from `report`), features scanned for." }),
          transcript: z
            .object({
              languageCode: z.string(),
              engine: z.string(),
              segmentCount: z.number().int(),
              jsonUri: z.string(),
              vttUri: z.string(),
            })
            .optional()
            .meta({ description: "SPEECH_TRANSCRIPTION: the language, the engine that ran, the number of segments, and where the transcript JSON and WebVTT captions were written (docs/speech.md)." }),
        }),
      })
      .optional()
      .meta({ description: "Present when done and processing succeeded." }),
    error: z
      .object({ code: z.number().int(), message: z.string() })
      .optional()
      .meta({ description: "Present when done and processing failed; code is a google.rpc code (docs/errors.md)." }),
  }),
);
export type Operation = z.infer<typeof operationSchema>;

export const processResponseSchema = named(
  "ProcessAccepted",
  z.object({ name: z.string().meta({ description: "The operation name, the path parameter of GET /api/v1/<name>." }) }),
);

export const errorBodySchema = named(
  "Error",
  z.object({
    error: z.object({
      code: z.number().int().meta({ description: "The HTTP status." }),
      status: z.string().meta({ description: "google.rpc status name, e.g. INVALID_ARGUMENT." }),
      message: z.string(),
      details: z.array(z.object({ field: z.string(), problem: z.string() })).optional(),
    }),
  }),
  "Every error response of the API (docs/errors.md).",
);

export interface OperationName {
  projectId: string;
  locationId: string;
  operationId: string;
}

export function formatOperationName(n: OperationName): string {
  return `projects/${n.projectId}/locations/${n.locationId}/operations/${n.operationId}`;
}

const NAME_RE = /^projects\/([^/]+)\/locations\/([^/]+)\/operations\/([^/]+)$/;

export function parseOperationName(name: string): OperationName | null {
  const m = NAME_RE.exec(name);
  return m ? { projectId: m[1]!, locationId: m[2]!, operationId: m[3]! } : null;
}
