import fs from "node:fs";
import { Readable } from "node:stream";
import { methodNotAllowed } from "@/server/http/respond";
import { exportFile } from "@/server/sessions/export";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

/** The redacted MP4 of the last export, as a download. */
export const GET = userOrApiRoute<{ projectId: string; sessionId: string }>(async (_req, { principal, params }) => {
  const { file, downloadName } = await exportFile(params.projectId, params.sessionId, principal);
  const size = fs.statSync(file).size;
  return new Response(Readable.toWeb(fs.createReadStream(file)) as ReadableStream, {
    headers: {
      "content-type": "video/mp4",
      "content-length": String(size),
      "content-disposition": `attachment; filename="${downloadName.replace(/[^\w.\- ]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(downloadName)}`,
      "cache-control": "private, no-store",
    },
  });
});

const notAllowed = async () => methodNotAllowed(["GET"]);
export { notAllowed as POST, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
