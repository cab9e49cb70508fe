import { apiRoute } from "@/server/http/route";
import { json, methodNotAllowed, readJson } from "@/server/http/respond";
import { createImageOperation } from "@/server/operations/create";
import { config } from "@/server/config";

export const dynamic = "force-dynamic";

export const POST = apiRoute(async (req) => json(await createImageOperation(await readJson(req, config().maxBodyBytes))));

const notAllowed = async () => methodNotAllowed(["POST"]);
export { notAllowed as GET, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
