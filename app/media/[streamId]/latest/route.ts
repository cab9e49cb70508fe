import { dataRoute } from "@/server/data-api/http";
import { latestMedia } from "@/server/data-api/media";

export const dynamic = "force-dynamic";

export const GET = dataRoute<{ streamId: string }>(({ params, url, base }) => latestMedia(params.streamId, url.searchParams.get("mediaType"), base));
