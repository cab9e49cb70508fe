import { dataRoute } from "@/server/data-api/http";
import { eventById } from "@/server/data-api/query";

export const dynamic = "force-dynamic";

export const GET = dataRoute<{ workspaceId: string; eventId: string }>(({ params }) => eventById(params.workspaceId, params.eventId));
