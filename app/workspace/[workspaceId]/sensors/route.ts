import { dataRoute } from "@/server/data-api/http";
import { sensorListing } from "@/server/data-api/query";

export const dynamic = "force-dynamic";

export const GET = dataRoute<{ workspaceId: string }>(({ params, url }) => sensorListing(url, "workspace", params.workspaceId));
