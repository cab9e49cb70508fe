import { parseBody } from "@/lib/api/parse";
import { embedTokenRequestSchema } from "@/lib/api/embed";
import { json, methodNotAllowed, readJson } from "@/server/http/respond";
import { clientAddress } from "@/server/http/client-address";
import { mintEmbedToken } from "@/server/embed/tokens";
import { userOrApiRoute } from "@/app/_lib/principal";

export const dynamic = "force-dynamic";

/** Mints a short-lived embed token for a host product's iframe (docs/embedding.md); admins and API tokens only. */
export const POST = userOrApiRoute(async (req, { principal }) => {
  const body = parseBody(embedTokenRequestSchema, await readJson(req, 16 * 1024));
  // the address the caller reached us at, unless OBSCURA_PUBLIC_URL says how browsers reach us
  const host = req.headers.get("host");
  const base = process.env.OBSCURA_PUBLIC_URL || (host ? `${new URL(req.url).protocol}//${host}` : new URL(req.url).origin);
  return json(await mintEmbedToken(principal, body, base, clientAddress(req.headers)), 201);
});

const notAllowed = async () => methodNotAllowed(["POST"]);
export { notAllowed as GET, notAllowed as PUT, notAllowed as PATCH, notAllowed as DELETE };
