/**
 * The HTTP edge of the sensor Data API: `X-API-KEY` (API keys made in /admin), the licence's
 * `analytics` feature, JSON bodies, and the error body of docs/errors.md (docs/data-api.md#errors).
 */
import { authenticateApiKey } from "../auth/bearer";
import { config } from "../config";
import { errorResponse, json, readJson } from "../http/respond";
import { assertFeature } from "../license";

type Params = Record<string, string>;

export function dataRoute<P extends Params = Params>(handler: (ctx: { req: Request; url: URL; params: P; body: unknown; base: string }) => Promise<unknown>, opts: { body?: boolean; raw?: boolean } = {}) {
  return async (req: Request, ctx: { params: Promise<P> }): Promise<Response> => {
    try {
      await authenticateApiKey(req);
      await assertFeature("analytics");
      const url = new URL(req.url);
      const body = opts.body ? await readJson(req, config().maxBodyBytes) : undefined;
      const base = (process.env.OBSCURA_PUBLIC_URL || `${url.protocol}//${req.headers.get("host") ?? url.host}`).replace(/\/$/, "");
      const out = await handler({ req, url, params: ctx?.params ? await ctx.params : ({} as P), body, base });
      return out instanceof Response ? out : json(out);
    } catch (e) {
      return errorResponse(e);
    }
  };
}
