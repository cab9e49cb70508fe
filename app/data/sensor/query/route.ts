import { dataRoute } from "@/server/data-api/http";
import { json } from "@/server/http/respond";
import { sensorRecords } from "@/server/data-api/query";

export const dynamic = "force-dynamic";

/** Flattened sensor records; the next page's token in X-Next-Page-Token. */
export const POST = dataRoute(
  async ({ body }) => {
    const { records, nextPageToken } = await sensorRecords(body);
    return json(records, 200, nextPageToken ? { "x-next-page-token": nextPageToken } : {});
  },
  { body: true },
);
