/**
 * OpenAPI paths and schemas of the vehicle annotation API (docs/vehicle-api.md). Its requests are
 * checked item by item in server/vehicle (each item answers its own error), so these schemas are
 * written out here rather than generated from a zod validator.
 */
const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const scored = (value: Record<string, unknown>) => ({ type: "object", properties: { value, score: { type: "number", minimum: 0, maximum: 1 } }, required: ["value", "score"] });
const vertex = { type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"] };
const attribute = (value: Record<string, unknown>) => ({ type: "object", properties: { value, attributeScore: { type: "number" }, detectionScore: { type: "number" }, updated: { type: "boolean" } } });

export const vehicleSchemas: Record<string, Record<string, unknown>> = {
  AnnotateRequest: {
    type: "object",
    required: ["requests"],
    additionalProperties: false,
    properties: {
      requests: {
        type: "array",
        minItems: 1,
        maxItems: 16,
        description: "At most OBSCURA_ANNOTATE_MAX_ITEMS (16) items; problems inside an item answer that item's error.",
        items: {
          type: "object",
          required: ["image", "features"],
          properties: {
            image: {
              type: "object",
              description: "JPG or PNG: base64 content or an http(s) URL (not both).",
              properties: { content: { type: "string", contentEncoding: "base64" }, source: { type: "object", properties: { imageUri: { type: "string", format: "uri" } }, required: ["imageUri"] } },
            },
            features: {
              type: "array",
              minItems: 1,
              items: { type: "object", required: ["type"], properties: { type: { enum: ["VEHICLE_DETECTION", "LICENSE_PLATE_DETECTION"] }, maxResults: { type: "integer", minimum: 1 } } },
            },
          },
        },
      },
    },
  },
  BoundingPoly: { type: "object", properties: { vertices: { type: "array", items: vertex, minItems: 4, maxItems: 4 }, normalizedVertices: { type: "array", items: vertex, minItems: 4, maxItems: 4 } } },
  LicensePlateAnnotation: {
    type: "object",
    properties: {
      string: scored({ type: "string" }),
      region: scored({ type: "string", description: "e.g. US-CA, DE; the group's fallback (US, EU) with score 0 when no format fits" }),
      boundingPoly: ref("BoundingPoly"),
      locale: { type: "string", description: "the region group read against" },
      score: { type: "number" },
      mid: { type: "string", const: "/m/01jfm_" },
      description: { type: "string" },
    },
  },
  VehicleAnnotation: {
    type: "object",
    properties: {
      make: scored({ type: "string" }),
      model: scored({ type: "string" }),
      generation: scored({ oneOf: [{ type: "null" }, { type: "object", properties: { start: { type: "integer" }, end: { type: "integer" } } }] }),
      color: scored({ enum: ["black", "white", "gray", "silver", "red", "orange", "yellow", "green", "blue", "purple", "brown", "beige"] }),
      licenseplate: { type: "object", properties: { $ref: { type: "string", description: "JSON pointer, e.g. #/responses/0/licenseplateAnnotations/1" } } },
      boundingPoly: ref("BoundingPoly"),
      locale: { type: "string" },
      score: { type: "number" },
      mid: { type: "string" },
      description: { enum: ["car", "bus", "truck", "motorbike"] },
    },
  },
  AnnotateResponse: {
    type: "object",
    properties: {
      responses: {
        type: "array",
        items: {
          type: "object",
          properties: {
            licenseplateAnnotations: { type: "array", items: ref("LicensePlateAnnotation") },
            vehicleAnnotations: { type: "array", items: ref("VehicleAnnotation") },
            error: { type: "object", properties: { code: { type: "integer", description: "google.rpc code" }, message: { type: "string" } } },
          },
        },
      },
    },
  },
  UrlListRequest: { type: "object", required: ["urlList"], properties: { urlList: { type: "array", items: { type: "string", format: "uri" }, minItems: 1, maxItems: 1 } } },
  V2Object: {
    type: "object",
    properties: {
      attributes: { type: "object", additionalProperties: attribute({}) },
      firstFrameTimestamp: { type: "integer" },
      bestDetectionTimestamp: { type: "integer" },
      class: { enum: ["licensePlate", "car"] },
      box: { type: "object", properties: { height: { type: "integer" }, width: { type: "integer" }, x: { type: "integer" }, y: { type: "integer" } } },
      detectionScore: { type: "number" },
      updated: { type: "boolean" },
      links: { type: "array", items: { type: "object", properties: { metaClass: { type: "string" }, id: { type: "string" } } } },
    },
  },
  V2Response: {
    type: "object",
    properties: {
      apiVersion: { type: "object", properties: { major: { const: 1 }, minor: { const: 1 } } },
      frameDimensions: { type: "object", properties: { w: { type: "integer" }, h: { type: "integer" } } },
      frameSource: { type: "string" },
      sourceId: { type: "string" },
      frameId: { type: "string" },
      analyticsTimestamp: { type: "integer" },
      frameTimestamp: { type: "integer", description: "hosted form only" },
      metaClasses: { type: "object", properties: { licensePlates: { type: "object", additionalProperties: ref("V2Object") }, vehicles: { type: "object", additionalProperties: ref("V2Object") } } },
      links: { type: "array", items: { type: "object", properties: { type: { type: "string" }, path: { type: "string" }, format: { type: "string" } } } },
      request_id: { type: "string" },
      engine_version: { type: "string" },
      time_analytics_start: { type: "number" },
      time_analytics_complete: { type: "number" },
    },
  },
};

type ErrorResponse = (description: string) => Record<string, unknown>;

export function vehiclePaths(errorResponse: ErrorResponse): Record<string, unknown> {
  const common = {
    "400": errorResponse("Malformed request as a whole (v11), or a bad urlList / unreadable image (v2)."),
    "401": errorResponse("Missing or wrong X-API-Key."),
    "503": errorResponse("Starting (Retry-After) or the health test failed."),
  };
  const v2 = (summary: string, operationId: string, extra: Record<string, unknown> = {}) => ({
    post: {
      tags: ["Vehicles"],
      operationId,
      summary,
      security: [{ apiKey: [] }],
      ...extra,
      requestBody: { required: true, content: { "application/json": { schema: ref("UrlListRequest") } } },
      responses: { "200": { description: "The v2 response.", content: { "application/json": { schema: ref("V2Response") } } }, ...common },
    },
  });
  const group = [{ name: "group", in: "path", required: true, schema: { enum: ["us", "eu"] } }];
  return {
    "/v11/images:annotate": {
      post: {
        tags: ["Vehicles"],
        operationId: "annotateImages",
        summary: "Vehicles and licence plates in images",
        security: [{ apiKey: [] }],
        requestBody: { required: true, content: { "application/json": { schema: ref("AnnotateRequest") } } },
        responses: { "200": { description: "One entry per item, in order.", content: { "application/json": { schema: ref("AnnotateResponse") } } }, ...common },
      },
    },
    "/v11/health": {
      get: {
        tags: ["Vehicles"],
        operationId: "vehicleHealth",
        summary: "Readiness of the vehicle annotation service",
        security: [],
        responses: { "200": { description: "Ready." }, "503": { description: "Starting (Retry-After) or failed; the body says why." } },
      },
    },
    "/v2/vehicle": v2("Legacy form, plates read against the us and eu groups", "vehicleV2"),
    "/v2/vehicle/{group}": v2("Legacy form, plate regions forced into the group", "vehicleV2Group", { parameters: group }),
    "/vehicle/{group}": v2("Legacy container form (keyless on OBSCURA_LEGACY_PORT)", "vehicleContainer", { parameters: group }),
  };
}
