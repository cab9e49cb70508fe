/** Registry of the named API schemas; docs/openapi.ts turns it into OpenAPI components. */
import { z } from "zod";

export const apiSchemas = z.registry<{ id: string; description?: string }>();

/** Registers `schema` under `id` (its OpenAPI component name) and returns it. */
export function named<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  apiSchemas.add(schema, { id, ...(description ? { description } : {}) });
  return schema;
}
