/**
 * The OpenAPI 3.1 document, generated from the same zod schemas that validate requests
 * (OpenAPI 3.1 schemas are JSON Schema 2020-12, which zod emits natively). Served at /openapi.json
 * and rendered at /docs/api.
 */
import { z } from "zod";
import { apiSchemas } from "./registry";
import "./video";
import "./image";
import "./operation";
import { detectionPaths, detectionSchemas } from "./detection-openapi";
import { vehiclePaths, vehicleSchemas } from "./vehicle-openapi";

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

const errorResponse = (description: string) => ({ description, content: { "application/json": { schema: ref("Error") } } });

const commonErrors = {
  "400": errorResponse("Invalid request: every problem is listed in error.details (field, problem)."),
  "401": errorResponse("Missing or wrong bearer token."),
  "405": errorResponse("Method not allowed; the Allow header lists the allowed ones."),
  "413": errorResponse("Body larger than the limit (OBSCURA_MAX_BODY_BYTES, default 1 MiB)."),
  "415": errorResponse("Content-Type is not application/json."),
  "503": errorResponse("The database or job queue is unavailable."),
};

let cached: Record<string, unknown> | null = null;

export function openApiDocument(): Record<string, unknown> {
  if (cached) return cached;
  const { schemas } = z.toJSONSchema(apiSchemas, {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: "any",
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Record<string, unknown>> };
  for (const s of Object.values(schemas)) delete s.$schema;
  const opParams = ["projectId", "locationId", "operationId"].map((name) => ({ name, in: "path", required: true, schema: { type: "string" } }));
  const process = (kind: "video" | "image") => ({
    tags: ["Processing"],
    operationId: kind === "video" ? "processVideo" : "processImage",
    summary: kind === "video" ? "Process a video (detect, render, state)" : "Process an image (experimental)",
    requestBody: { required: true, content: { "application/json": { schema: ref(kind === "video" ? "VideoProcessRequest" : "ImageProcessRequest") } } },
    responses: {
      "200": { description: "Accepted; poll the operation by its name.", content: { "application/json": { schema: ref("ProcessAccepted") } } },
      ...commonErrors,
      ...(kind === "video" ? { "409": errorResponse("prepareConfig.sessionId already belongs to another input.") } : {}),
    },
  });
  cached = {
    openapi: "3.1.0",
    info: {
      title: "Obscura API",
      version: "1.0.0",
      description:
        "Asynchronous redaction of video and images (every call carries `Authorization: Bearer <token>`; errors: docs/errors.md; webhooks: docs/webhooks.md; state layout: docs/state.md), the vehicle and licence-plate annotation API (`X-API-Key`; docs/vehicle-api.md), and the person/face Detection API (`X-Access-Token`; docs/detection-api.md).",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    tags: [{ name: "Processing" }, { name: "Operations" }, { name: "Vehicles", description: "docs/vehicle-api.md: X-API-Key on the main port" }, { name: "Detection", description: "docs/detection-api.md: X-Access-Token" }],
    paths: {
      "/api/v1/videos:process": { post: process("video") },
      "/api/v1/images:process": { post: process("image") },
      "/api/v1/projects/{projectId}/locations/{locationId}/operations/{operationId}": {
        get: {
          tags: ["Operations"],
          operationId: "getOperation",
          summary: "Get an operation (progress, response or error)",
          parameters: opParams,
          responses: {
            "200": { description: "The operation.", content: { "application/json": { schema: ref("Operation") } } },
            "404": errorResponse("No such operation."),
            "401": commonErrors["401"],
          },
        },
        delete: {
          tags: ["Operations"],
          operationId: "deleteOperation",
          summary: "Cancel a pending operation, or remove a finished one",
          description:
            "Pending and not yet started: cancelled at once (200, the operation, done with error code 1 CANCELLED). Running: 202 with the operation; the worker stops within a few seconds and the operation ends with code 1 CANCELLED. Finished: removed (200 `{}`); GET then answers 404. Session state is never touched: use STATE_DROP.",
          parameters: opParams,
          responses: {
            "200": { description: "Cancelled (the operation) or removed (`{}`).", content: { "application/json": { schema: { oneOf: [ref("Operation"), { type: "object", maxProperties: 0 }] } } } },
            "202": { description: "Cancel requested; the worker stops within seconds.", content: { "application/json": { schema: ref("Operation") } } },
            "404": errorResponse("No such operation."),
            "401": commonErrors["401"],
          },
        },
      },
      ...vehiclePaths(errorResponse),
      ...detectionPaths(),
    },
    components: {
      schemas: { ...schemas, ...vehicleSchemas, ...detectionSchemas },
      securitySchemes: { bearer: { type: "http", scheme: "bearer" }, apiKey: { type: "apiKey", in: "header", name: "X-API-Key" }, accessToken: { type: "apiKey", in: "header", name: "X-Access-Token" } },
    },
  };
  return cached;
}
