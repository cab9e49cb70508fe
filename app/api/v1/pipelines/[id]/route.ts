import { json, methodNotAllowed } from "@/server/http/respond";
import { ObscuraError } from "@/lib/errors";
import { getPipeline, stopPipeline } from "@/server/analytics/runs";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

/** A pipeline's state and statistics. */
export const GET = userOrApiRoute<{ id: string }>(async (_req, { principal, params }) => json(await getPipeline(principal, params.id)));

/** POST /api/v1/pipelines/{id}:stop */
export const POST = userOrApiRoute<{ id: string }>(async (_req, { principal, params }) => {
  const m = /^(.+):stop$/.exec(decodeURIComponent(params.id));
  if (!m) throw new ObscuraError("NOT_FOUND", `POST ${params.id}: the only action on a pipeline is :stop (POST /api/v1/pipelines/{id}:stop)`);
  return json(await stopPipeline(principal, m[1]!));
});

/** DELETE stops it too (the record stays for its history). */
export const DELETE = userOrApiRoute<{ id: string }>(async (_req, { principal, params }) => json(await stopPipeline(principal, params.id)));

const notAllowed = async () => methodNotAllowed(["GET", "POST", "DELETE"]);
export { notAllowed as PUT, notAllowed as PATCH };
