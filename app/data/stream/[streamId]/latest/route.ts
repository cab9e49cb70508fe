import { dataRoute } from "@/server/data-api/http";
import { latestStreamRecord } from "@/server/data-api/query";

export const dynamic = "force-dynamic";

export const GET = dataRoute<{ streamId: string }>(({ params, url }) => latestStreamRecord(params.streamId, url.searchParams.get("sensorId")));
