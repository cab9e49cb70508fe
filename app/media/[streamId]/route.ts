import { dataRoute } from "@/server/data-api/http";
import { mediaBytes } from "@/server/data-api/media";

export const dynamic = "force-dynamic";

/** The media item's bytes (the newest of the stream without mediaId). */
export const GET = dataRoute<{ streamId: string }>(async ({ params, url }) => {
  const m = await mediaBytes(params.streamId, url.searchParams.get("mediaId"));
  return new Response(new Uint8Array(m.bytes), { status: 200, headers: { "content-type": m.contentType, "content-length": String(m.bytes.length), "x-media-id": m.id, "cache-control": "private, max-age=3600" } });
});
