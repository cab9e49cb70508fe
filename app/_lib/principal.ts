/**
 * Who is calling an API route that people (the editor, with their sign-in cookie), embedded
 * editors (an embed token, docs/embedding.md) and programs (Authorization: Bearer) use: an embed
 * token or a bearer token when the header is there, an embed token in `embed_token` for reads,
 * else the signed-in user; 401 otherwise.
 */
import { ObscuraError } from "@/lib/errors";
import { authenticate, type Principal } from "@/server/auth/bearer";
import { embedPrincipal, looksLikeEmbedToken, verifyEmbedToken } from "@/server/embed/tokens";
import { errorResponse } from "@/server/http/respond";
import { currentUser } from "./session";

export async function requestPrincipal(req: Request): Promise<Principal> {
  const auth = req.headers.get("authorization");
  const bearer = /^Bearer\s+(\S+)$/i.exec(auth ?? "")?.[1];
  if (bearer && looksLikeEmbedToken(bearer)) return embedPrincipal(await verifyEmbedToken(bearer));
  if (auth) return authenticate(req);
  // the video element and images cannot send headers: embed tokens may ride in the URL, for reads only
  const fromQuery = new URL(req.url).searchParams.get("embed_token");
  if (fromQuery) {
    if (req.method !== "GET" && req.method !== "HEAD") throw new ObscuraError("UNAUTHENTICATED", "embed_token in the URL is accepted for reads only: send it as Authorization: Bearer");
    return embedPrincipal(await verifyEmbedToken(fromQuery));
  }
  const user = await currentUser();
  if (!user) throw new ObscuraError("UNAUTHENTICATED", "sign in, or send Authorization: Bearer <token>");
  return { kind: "user", id: user.id, name: user.username, role: user.role };
}

type Params = Record<string, string | string[] | undefined>;

/** Route wrapper: principal, params, and the shared error mapping. */
export function userOrApiRoute<P extends Params>(handler: (req: Request, ctx: { principal: Principal; params: P }) => Promise<Response>) {
  return async (req: Request, ctx: { params: Promise<P> }): Promise<Response> => {
    try {
      const principal = await requestPrincipal(req);
      return await handler(req, { principal, params: await ctx.params });
    } catch (e) {
      return errorResponse(e);
    }
  };
}
