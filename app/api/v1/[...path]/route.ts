import { ObscuraError } from "@/lib/errors";
import { apiRoute } from "@/server/http/route";

export const dynamic = "force-dynamic";

/** Anything else under /api/v1: authenticated 404 in the API's error shape. */
const notFound = apiRoute<{ path: string[] }>(async (req) => {
  throw new ObscuraError("NOT_FOUND", `no such API resource: ${new URL(req.url).pathname}`);
});
export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
