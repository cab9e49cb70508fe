import { ObscuraError } from "@/lib/errors";
import { json, readJson } from "@/server/http/respond";
import fs from "node:fs";
import { Readable } from "node:stream";
import { handleTus, processUpload, uploadOutputFile, uploadResult } from "@/server/uploads";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

type P = { projectId: string; rest?: string[] };

/** Resumable uploads (tus) and POST .../uploads/{id}:process (docs/sessions.md#uploading-from-the-browser). */
const tusRoute = userOrApiRoute<P>(async (req, { principal, params }) => {
  const rest = params.rest ?? [];
  if (rest.length > 1) throw new ObscuraError("NOT_FOUND", `no such upload resource: ${new URL(req.url).pathname}`);
  const last = rest[0] ?? "";
  if (req.method === "POST" && last.endsWith(":process")) {
    return json(await processUpload(last.slice(0, -":process".length), principal, params.projectId, await readJson(req, 64 * 1024)));
  }
  return handleTus(req, principal, params.projectId);
});

/** GET .../uploads/{id}: an uploaded image's processing; GET .../uploads/{id}/<name>-redacted.jpg: the result. */
export const GET = userOrApiRoute<P>(async (_req, { principal, params }) => {
  const [id, file, ...more] = params.rest ?? [];
  if (!id || more.length) throw new ObscuraError("NOT_FOUND", "no such upload resource");
  if (!file) return json(await uploadResult(id, principal, params.projectId));
  const path = uploadOutputFile(id, principal, params.projectId, file);
  return new Response(Readable.toWeb(fs.createReadStream(path)) as ReadableStream, {
    headers: { "content-type": "image/jpeg", "content-length": String(fs.statSync(path).size), "content-disposition": `attachment; filename="${file.replace(/[^\w.\- ]/g, "_")}"`, "cache-control": "private, no-store" },
  });
});

export { tusRoute as POST, tusRoute as PATCH, tusRoute as HEAD, tusRoute as DELETE, tusRoute as OPTIONS };
