/**
 * The wrapper every /api/v1 route handler goes through: authenticate, run, map errors.
 * Route files stay one-liners around a function in server/.
 */
import { authenticate, type Principal } from "../auth/bearer";
import { errorResponse } from "./respond";

type Params = Record<string, string | string[] | undefined>;

export function apiRoute<P extends Params = Params>(
  handler: (req: Request, ctx: { principal: Principal; params: P }) => Promise<Response>,
) {
  return async (req: Request, ctx: { params: Promise<P> }): Promise<Response> => {
    try {
      const principal = await authenticate(req);
      const params = ctx?.params ? await ctx.params : ({} as P);
      return await handler(req, { principal, params });
    } catch (e) {
      return errorResponse(e);
    }
  };
}
