import { json, methodNotAllowed, readJson } from "@/server/http/respond";
import { followInSession } from "@/server/sessions/follow";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

/** Follows the content of a drawn box forward and backward (the editor's "Track automatically"). */
export const POST = userOrApiRoute<{ projectId: string; sessionId: string }>(async (req, { principal, params }) =>
  json(await followInSession(params.projectId, params.sessionId, principal, await readJson(req, 16 * 1024))),
);

const notAllowed = async () => methodNotAllowed(["POST"]);
export { notAllowed as GET, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
