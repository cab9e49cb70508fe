import { dataRoute } from "@/server/data-api/http";
import { queryMedia } from "@/server/data-api/media";

export const dynamic = "force-dynamic";

export const POST = dataRoute(({ body, base }) => queryMedia(body, base), { body: true });
