import { ObscuraError } from "@/lib/errors";
import { methodNotAllowed } from "@/server/http/respond";
import { transcriptVtt } from "@/server/sessions/export";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

/** The transcript as WebVTT captions (after SPEECH_TRANSCRIPTION), for the editor's player. */
export const GET = userOrApiRoute<{ projectId: string; sessionId: string }>(async (_req, { principal, params }) => {
  const t = await transcriptVtt(params.projectId, params.sessionId, principal);
  if (!t) throw new ObscuraError("NOT_FOUND", "this video has no transcript: run SPEECH_TRANSCRIPTION first");
  return new Response(new Uint8Array(t.vtt), { headers: { "content-type": "text/vtt; charset=utf-8", "content-language": t.languageCode, "cache-control": "private, no-cache" } });
});

const notAllowed = async () => methodNotAllowed(["GET"]);
export { notAllowed as POST, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
