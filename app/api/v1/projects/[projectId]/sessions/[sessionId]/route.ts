import { json, methodNotAllowed } from "@/server/http/respond";
import { getSession } from "@/server/sessions";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

type P = { projectId: string; sessionId: string };
export const GET = userOrApiRoute<P>(async (_req, { principal, params }) => json(await getSession(params.projectId, params.sessionId, principal)));

const notAllowed = async () => methodNotAllowed(["GET"]);
export { notAllowed as POST, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
