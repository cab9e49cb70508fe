import { openApiDocument } from "@/lib/api/openapi";
import { json } from "@/server/http/respond";

export const dynamic = "force-static";

export const GET = async () => json(openApiDocument(), 200, { "cache-control": "public, max-age=300" });
