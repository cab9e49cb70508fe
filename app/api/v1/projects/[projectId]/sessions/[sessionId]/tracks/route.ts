import { parseBody } from "@/lib/api/parse";
import { saveTracksRequestSchema } from "@/lib/api/session";
import { config } from "@/server/config";
import { json, methodNotAllowed, readJson } from "@/server/http/respond";
import { saveTracks } from "@/server/sessions";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

/** Tracks of a long video are large: up to 64 MiB (or OBSCURA_MAX_BODY_BYTES when larger). */
const MAX_TRACKS_BYTES = 64 << 20;

type P = { projectId: string; sessionId: string };
export const PUT = userOrApiRoute<P>(async (req, { principal, params }) => {
  const body = parseBody(saveTracksRequestSchema, await readJson(req, Math.max(MAX_TRACKS_BYTES, config().maxBodyBytes)));
  return json(await saveTracks(params.projectId, params.sessionId, principal, body));
});

const notAllowed = async () => methodNotAllowed(["PUT"]);
export { notAllowed as GET, notAllowed as POST, notAllowed as PATCH, notAllowed as DELETE };
