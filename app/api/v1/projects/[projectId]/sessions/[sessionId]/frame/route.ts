import { methodNotAllowed } from "@/server/http/respond";
import { frameJpeg } from "@/server/sessions/export";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

/** One frame of the source as JPEG, optionally a box's crop: the editor's track thumbnails. */
export const GET = userOrApiRoute<{ projectId: string; sessionId: string }>(async (req, { principal, params }) => {
  const jpg = await frameJpeg(params.projectId, params.sessionId, principal, new URL(req.url).searchParams);
  return new Response(new Uint8Array(jpg), { headers: { "content-type": "image/jpeg", "cache-control": "private, max-age=86400" } });
});

const notAllowed = async () => methodNotAllowed(["GET"]);
export { notAllowed as POST, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
