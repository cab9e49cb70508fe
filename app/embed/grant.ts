/** The embed token of an /embed page (?token=), checked against the page's project and session. */
import { ObscuraError } from "@/lib/errors";
import { verifyEmbedToken, type EmbedGrant } from "@/server/embed/tokens";

export async function pageGrant(token: string | string[] | undefined, projectId: string, sessionId?: string): Promise<{ grant: EmbedGrant; token: string } | { error: string }> {
  const t = Array.isArray(token) ? token[0] : token;
  if (!t) return { error: "the link has no embed token: the host application must mint one (POST /api/v1/embed-tokens)" };
  try {
    const grant = await verifyEmbedToken(t);
    if (grant.projectId !== projectId) return { error: `this embed token is for project ${JSON.stringify(grant.projectId)}` };
    if (sessionId && grant.sessionId && grant.sessionId !== sessionId) return { error: `this embed token is for another video` };
    return { grant, token: t };
  } catch (e) {
    if (e instanceof ObscuraError) return { error: e.message };
    throw e;
  }
}
