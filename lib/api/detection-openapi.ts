/**
 * OpenAPI path and schemas of the Detection API (docs/detection-api.md). Its errors have their own
 * body ({error, reason, reasonCode}), so these are written out rather than generated.
 */
const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

export const detectionSchemas: Record<string, Record<string, unknown>> = {
  DetectionError: {
    type: "object",
    required: ["error", "reason", "reasonCode"],
    properties: {
      error: { type: "string", description: "status text" },
      reason: { type: "string" },
      reasonCode: { type: "integer", description: "HTTP status x 100 + an id (docs/detection-api.md#errors)" },
      details: { type: "object", properties: { statusCode: { type: "integer" }, statusMessage: { type: "string" }, body: { type: "string" } } },
    },
  },
  DetectionResponse: {
    type: "object",
    properties: {
      image: { type: "object", properties: { width: { type: "integer" }, height: { type: "integer" }, orientation: { type: "integer", description: "EXIF code of the input" } } },
      objects: {
        type: "array",
        items: {
          type: "object",
          properties: {
            type: { enum: ["face", "person"] },
            boundingBox: { type: "object", properties: { x: { type: "integer" }, y: { type: "integer" }, width: { type: "integer" }, height: { type: "integer" } } },
            attributes: {
              type: "object",
              description: "faces of 40 px and more, only the faceOption values asked",
              properties: {
                gender: { enum: ["male", "female"] },
                genderConfidence: { type: "number" },
                age: { type: "integer", minimum: 0, maximum: 100 },
                ageConfidence: { type: "number" },
                emotion: { enum: ["neutral", "sadness", "disgust", "anger", "surprise", "fear", "happiness"] },
                emotionConfidence: { type: "number" },
                emotionsAll: { type: "object", additionalProperties: { type: "number" } },
                pose: { type: "object", properties: { pitch: { type: "number" }, roll: { type: "number" }, yaw: { type: "number" } } },
                frontal: { type: "boolean" },
                landmarks: { type: "object", additionalProperties: { type: "array", items: { type: "array", items: { type: "number" }, minItems: 2, maxItems: 2 } } },
              },
            },
          },
        },
      },
    },
  },
};

export function detectionPaths(): Record<string, unknown> {
  const err = (description: string) => ({ description, content: { "application/json": { schema: ref("DetectionError") } } });
  const list = (values: string[]) => ({ type: "string", description: `comma list of ${values.join(", ")}` });
  return {
    "/v1/detections": {
      post: {
        tags: ["Detection"],
        operationId: "detect",
        summary: "People and faces in an image, with face attributes",
        security: [{ accessToken: [] }],
        parameters: [
          { name: "type", in: "query", required: false, schema: list(["all", "face", "person"]) },
          { name: "faceOption", in: "query", required: false, schema: list(["gender", "landmark", "emotion", "pose", "age"]) },
        ],
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: { type: "object", required: ["image"], properties: { image: { type: "string", description: "http(s) URL or base64 (data: prefix allowed)" } } } },
            "application/octet-stream": { schema: { type: "string", format: "binary" } },
          },
        },
        responses: {
          "200": { description: "Detections.", content: { "application/json": { schema: ref("DetectionResponse") } } },
          "400": err("Invalid request (type, faceOption, body, image)."),
          "401": err("Token missing, unknown, revoked or of another kind."),
          "403": err("The token's monthly quota is used up."),
          "405": err("Only POST."),
          "406": err("Unknown path under /v1/."),
          "413": err("Image over 10 MB."),
          "415": err("Content-Type or image format not supported."),
          "500": err("Unexpected failure."),
          "502": err("Busy or not ready."),
        },
      },
    },
  };
}
