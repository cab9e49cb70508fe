import { dataRoute } from "@/server/data-api/http";
import { streamAggregate } from "@/server/data-api/query";

export const dynamic = "force-dynamic";

export const POST = dataRoute(({ body }) => streamAggregate(body), { body: true });
