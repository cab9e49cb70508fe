import fs from "node:fs";
import { Readable } from "node:stream";
import { methodNotAllowed } from "@/server/http/respond";
import { sessionMediaFile } from "@/server/sessions";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

/** The session's source video for the editor's player, with byte ranges (seeking). */
export const GET = userOrApiRoute<{ projectId: string; sessionId: string }>(async (req, { principal, params }) => {
  const { file, contentType } = await sessionMediaFile(params.projectId, params.sessionId, principal);
  const size = fs.statSync(file).size;
  const headers: Record<string, string> = { "content-type": contentType, "accept-ranges": "bytes", "cache-control": "private, max-age=3600" };
  const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.get("range") ?? "");
  if (m && (m[1] || m[2])) {
    const start = m[1] ? Number(m[1]) : Math.max(0, size - Number(m[2]));
    const end = m[1] && m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    if (start >= size || start > end) return new Response(null, { status: 416, headers: { "content-range": `bytes */${size}` } });
    const body = Readable.toWeb(fs.createReadStream(file, { start, end })) as ReadableStream;
    return new Response(body, { status: 206, headers: { ...headers, "content-range": `bytes ${start}-${end}/${size}`, "content-length": String(end - start + 1) } });
  }
  return new Response(Readable.toWeb(fs.createReadStream(file)) as ReadableStream, { status: 200, headers: { ...headers, "content-length": String(size) } });
});

const notAllowed = async () => methodNotAllowed(["GET"]);
export { notAllowed as POST, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
