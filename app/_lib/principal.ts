/**
 * Who is calling an API route that people (the editor, with their sign-in cookie) and programs
 * (Authorization: Bearer) both use: a bearer token when the header is there, else the signed-in
 * user; 401 otherwise.
 */
import { ObscuraError } from "@/lib/errors";
import { authenticate, type Principal } from "@/server/auth/bearer";
import { errorResponse } from "@/server/http/respond";
import { currentUser } from "./session";

export async function requestPrincipal(req: Request): Promise<Principal> {
  if (req.headers.get("authorization")) return authenticate(req);
  const user = await currentUser();
  if (!user) throw new ObscuraError("UNAUTHENTICATED", "sign in, or send Authorization: Bearer <token>");
  return { kind: "user", id: user.id, name: user.username, role: user.role };
}

type Params = Record<string, string>;

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
