/**
 * The HTTP edge of the vehicle APIs: which listener a request came through, its key, readiness,
 * and the error mapping (docs/vehicle-api.md#authentication).
 *
 * On the main port every vehicle endpoint needs `X-API-Key` (keys are made in /admin, kind "API
 * key"; OBSCURA_API_TOKEN is accepted too). The optional compatibility listeners of `npm start`
 * (OBSCURA_GATEWAY_PORT: /v11 as the self-hosted gateway; OBSCURA_LEGACY_PORT: /vehicle/us|eu as
 * the legacy container) take no key, like the products they replace. They mark the requests they
 * forward with a per-process secret header that the main port strips, so a client cannot claim to
 * have come through them.
 */
import { ObscuraError } from "@/lib/errors";
import { authenticateApiKey } from "../auth/bearer";
import { assertCanProcess, assertFeature } from "../license";
import { errorResponse, json, readJson } from "../http/respond";
import { annotateLimits } from "./images";
import { requireReady, serviceState } from "./service";

export type Listener = "main" | "gateway" | "legacy";
export type VehicleApi = "v11" | "v2" | "container";

export const LISTENER_HEADER = "x-obscura-listener";
export const LISTENER_SECRET_HEADER = "x-obscura-listener-secret";

export function listenerOf(req: Request): Listener {
  const which = req.headers.get(LISTENER_HEADER);
  const secret = process.env.OBSCURA_LISTENER_SECRET;
  if ((which === "gateway" || which === "legacy") && secret && req.headers.get(LISTENER_SECRET_HEADER) === secret) return which;
  return "main";
}

/** Compatibility listeners and the APIs they serve without a key. */
const KEYLESS: Record<Exclude<Listener, "main">, VehicleApi> = { gateway: "v11", legacy: "container" };

async function authorize(req: Request, api: VehicleApi): Promise<void> {
  const listener = listenerOf(req);
  if (listener === "main") {
    await authenticateApiKey(req);
    return;
  }
  if (KEYLESS[listener] !== api) throw new ObscuraError("NOT_FOUND", `this listener serves only the ${KEYLESS[listener]} API`);
}

const RETRY_AFTER_SECONDS = "5";

function failure(e: unknown): Response {
  const res = errorResponse(e);
  if (res.status === 503) res.headers.set("retry-after", RETRY_AFTER_SECONDS);
  if (res.status === 401) res.headers.set("www-authenticate", 'ApiKey header="X-API-Key"');
  return res;
}

/** A POST handler of a vehicle API: key, readiness, JSON body, the handler's JSON answer. */
export function vehicleRoute(api: VehicleApi, handler: (body: unknown, req: Request) => Promise<unknown>) {
  return async (req: Request): Promise<Response> => {
    try {
      await authorize(req, api);
      // an expired licence, or one without the vehicle API, refuses new analyses (403)
      await assertCanProcess();
      await assertFeature("vehicle-api");
      requireReady();
      const body = await readJson(req, annotateLimits().bodyBytes);
      return json(await handler(body, req));
    } catch (e) {
      return failure(e);
    }
  };
}

/** GET health: the readiness state; 200 when ready, 503 (Retry-After while starting) otherwise. No key needed. */
export async function vehicleHealth(): Promise<Response> {
  const st = serviceState();
  const body = { service: "vehicle-annotation", state: st.phase, ready: st.phase === "ready", startedAt: st.startedAt, readyAt: st.readyAt, error: st.error, healthTest: st.healthTest };
  return json(body, st.phase === "ready" ? 200 : 503, st.phase === "starting" ? { "retry-after": RETRY_AFTER_SECONDS } : {});
}

/** The region group of a /…/us or /…/eu path; NOT_FOUND for any other. */
export function regionPath(req: Request): "us" | "eu" {
  const last = new URL(req.url).pathname.split("/").filter(Boolean).pop() ?? "";
  if (last === "us" || last === "eu") return last;
  throw new ObscuraError("NOT_FOUND", `no such region group path /${last}: use /us or /eu`);
}
