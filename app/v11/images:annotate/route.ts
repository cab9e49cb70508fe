import { methodNotAllowed } from "@/server/http/respond";
import { annotate } from "@/server/vehicle/annotate";
import { vehicleRoute } from "@/server/vehicle/http";

export const dynamic = "force-dynamic";

export const POST = vehicleRoute("v11", (body) => annotate(body));

const notAllowed = async () => methodNotAllowed(["POST"]);
export { notAllowed as GET, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
