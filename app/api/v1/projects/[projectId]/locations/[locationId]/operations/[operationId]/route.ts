import { apiRoute } from "@/server/http/route";
import { json, methodNotAllowed } from "@/server/http/respond";
import { deleteOperation, getOperation } from "@/server/operations/read-remove";

export const dynamic = "force-dynamic";

type P = { projectId: string; locationId: string; operationId: string };
const nameOf = (p: P) => `projects/${p.projectId}/locations/${p.locationId}/operations/${p.operationId}`;

export const GET = apiRoute<P>(async (_req, { params }) => json(await getOperation(nameOf(params))));

export const DELETE = apiRoute<P>(async (_req, { params }) => {
  const r = await deleteOperation(nameOf(params));
  if (r.kind === "removed") return json({});
  return json(r.operation, r.kind === "cancelling" ? 202 : 200);
});

const notAllowed = async () => methodNotAllowed(["GET", "DELETE"]);
export { notAllowed as POST, notAllowed as PUT, notAllowed as PATCH };
