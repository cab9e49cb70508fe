import { json, methodNotAllowed } from "@/server/http/respond";
import { listSessions } from "@/server/sessions";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

export const GET = userOrApiRoute<{ projectId: string }>(async (_req, { principal, params }) => json({ sessions: await listSessions(params.projectId, principal) }));

const notAllowed = async () => methodNotAllowed(["GET"]);
export { notAllowed as POST, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
