import fs from "node:fs/promises";
import path from "node:path";

export const dynamic = "force-dynamic";

/** Redoc's browser bundle, served from node_modules so the reference page works offline. */
export async function GET() {
  const file = path.join(process.cwd(), "node_modules", "redoc", "bundles", "redoc.standalone.js");
  const body = await fs.readFile(file);
  return new Response(body, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" } });
}
