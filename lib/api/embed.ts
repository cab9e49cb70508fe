/** The embed-token API (docs/embedding.md): what a host product's backend sends to mint one. */
import { z } from "zod";
import { named } from "./registry";

export const embedTokenRequestSchema = named(
  "EmbedTokenRequest",
  z.strictObject({
    username: z.string({ error: "username must name the user the editor acts as" }).min(1, { error: "username must not be empty" }).max(128),
    projectId: z.string({ error: "projectId must be a project id" }).min(1, { error: "projectId must not be empty" }).max(64),
    sessionId: z.string({ error: "sessionId must be a session id" }).min(1).max(64).optional(),
    origin: z.string({ error: "origin must be the host page's origin, e.g. https://portal.example.com" }).min(1).max(300),
    ttlSeconds: z
      .number({ error: "ttlSeconds must be a number of seconds" })
      .int({ error: "ttlSeconds must be a whole number" })
      .min(60, { error: "ttlSeconds must be at least 60" })
      .max(43_200, { error: "ttlSeconds must be at most 43200 (12 hours)" })
      .optional(),
  }),
  "Body of POST /api/v1/embed-tokens.",
);
export type EmbedTokenRequest = z.infer<typeof embedTokenRequestSchema>;
