import { dataRoute } from "@/server/data-api/http";
import { deviceAggregate } from "@/server/data-api/query";

export const dynamic = "force-dynamic";

/** Aggregates per device sensor: POST /data/query?startTime=&endTime= (docs/data-api.md). */
export const POST = dataRoute(({ url, body }) => deviceAggregate(url, body), { body: true });
