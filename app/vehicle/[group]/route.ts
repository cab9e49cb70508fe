import { methodNotAllowed } from "@/server/http/respond";
import { regionPath, vehicleRoute } from "@/server/vehicle/http";
import { vehicleV2 } from "@/server/vehicle/v2";

export const dynamic = "force-dynamic";

/** The legacy container form: /vehicle/us and /vehicle/eu (keyless on OBSCURA_LEGACY_PORT). */
export const POST = vehicleRoute("container", async (body, req) => vehicleV2(body, regionPath(req), "container"));

const notAllowed = async () => methodNotAllowed(["POST"]);
export { notAllowed as GET, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
