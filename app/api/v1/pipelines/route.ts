import { readBodyBytes, json, methodNotAllowed } from "@/server/http/respond";
import { ObscuraError } from "@/lib/errors";
import { assertCanProcess, assertFeature } from "@/server/license";
import { createPipeline, listPipelines } from "@/server/analytics/runs";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

/** Starts an analytics pipeline in a worker (docs/pipeline.md#rest): JSON {name, config} or the configuration as YAML. */
export const POST = userOrApiRoute(async (req, { principal }) => {
  await assertFeature("analytics");
  await assertCanProcess();
  const bytes = await readBodyBytes(req, 1024 * 1024, () => new ObscuraError("INVALID_ARGUMENT", "the pipeline request is larger than 1 MiB", { httpStatus: 413 }));
  const type = req.headers.get("content-type") ?? "";
  let body: unknown = bytes.toString("utf8");
  if (!/yaml/i.test(type)) {
    try {
      body = JSON.parse(body as string);
    } catch (e) {
      throw new ObscuraError("INVALID_ARGUMENT", `the body is not valid JSON (send Content-Type: application/yaml for YAML): ${(e as Error).message}`);
    }
  }
  return json(await createPipeline(principal, body), 201);
});

/** Lists pipelines, newest first (?state=RUNNING). */
export const GET = userOrApiRoute(async (req, { principal }) => json(await listPipelines(principal, new URL(req.url).searchParams.get("state"))));

const notAllowed = async () => methodNotAllowed(["GET", "POST"]);
export { notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
