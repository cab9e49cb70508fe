import { ObscuraError } from "@/lib/errors";
import { methodNotAllowed } from "@/server/http/respond";
import { sessionPoster } from "@/server/sessions";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

/** The session's poster frame (JPEG), for project lists. */
export const GET = userOrApiRoute<{ projectId: string; sessionId: string }>(async (_req, { principal, params }) => {
  const jpg = await sessionPoster(params.projectId, params.sessionId, principal);
  if (!jpg) throw new ObscuraError("NOT_FOUND", "this session has no poster yet");
  return new Response(new Uint8Array(jpg), { headers: { "content-type": "image/jpeg", "cache-control": "private, max-age=300" } });
});

const notAllowed = async () => methodNotAllowed(["GET"]);
export { notAllowed as POST, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
