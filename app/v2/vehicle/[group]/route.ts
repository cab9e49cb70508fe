import { methodNotAllowed } from "@/server/http/respond";
import { regionPath, vehicleRoute } from "@/server/vehicle/http";
import { vehicleV2 } from "@/server/vehicle/v2";

export const dynamic = "force-dynamic";

/** /v2/vehicle/us and /v2/vehicle/eu: plate regions forced into that group. */
export const POST = vehicleRoute("v2", async (body, req) => vehicleV2(body, regionPath(req), "hosted"));

const notAllowed = async () => methodNotAllowed(["POST"]);
export { notAllowed as GET, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
