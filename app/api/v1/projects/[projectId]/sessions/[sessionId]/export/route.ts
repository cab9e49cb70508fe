import { json, methodNotAllowed, readJson } from "@/server/http/respond";
import { exportStatus, startExport } from "@/server/sessions/export";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

type P = { projectId: string; sessionId: string };

/** Starts a MEDIA_RENDER of the saved tracks (the editor's Export). */
export const POST = userOrApiRoute<P>(async (req, { principal, params }) => json(await startExport(params.projectId, params.sessionId, principal, await readJson(req, 64 * 1024))));

/** The latest export's progress and, once rendered, where to download it. */
export const GET = userOrApiRoute<P>(async (_req, { principal, params }) => json(await exportStatus(params.projectId, params.sessionId, principal)));

const notAllowed = async () => methodNotAllowed(["GET", "POST"]);
export { notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
