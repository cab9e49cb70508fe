import { ObscuraError } from "@/lib/errors";
import { json, readJson } from "@/server/http/respond";
import { handleTus, processUpload } from "@/server/uploads";
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

export { tusRoute as POST, tusRoute as PATCH, tusRoute as HEAD, tusRoute as DELETE, tusRoute as OPTIONS };
