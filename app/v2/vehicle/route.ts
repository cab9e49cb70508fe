import { methodNotAllowed } from "@/server/http/respond";
import { vehicleRoute } from "@/server/vehicle/http";
import { vehicleV2 } from "@/server/vehicle/v2";

export const dynamic = "force-dynamic";

/** Both region groups (us and eu). */
export const POST = vehicleRoute("v2", (body) => vehicleV2(body, "both", "hosted"));

const notAllowed = async () => methodNotAllowed(["POST"]);
export { notAllowed as GET, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
