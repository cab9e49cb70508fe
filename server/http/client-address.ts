/**
 * The address of the client behind a request, for sign-in throttling and the audit log.
 *
 * Route handlers in Next.js do not see the socket, so the server (scripts/start.ts) stamps every
 * request with `x-obscura-client-address`, overwriting whatever a client sent under that name:
 * the socket's address, or with OBSCURA_TRUST_PROXY=1 (behind a reverse proxy that sets it) the
 * left-most address of X-Forwarded-For. Without a trusted proxy, X-Forwarded-For is ignored: a
 * client could otherwise pick a fresh address for every guess.
 */
import type { IncomingMessage } from "node:http";

export const CLIENT_ADDRESS_HEADER = "x-obscura-client-address";

const trustProxy = () => /^(1|true|yes|on)$/i.test(process.env.OBSCURA_TRUST_PROXY ?? "");

export function stampClientAddress(req: IncomingMessage): void {
  let address = req.socket.remoteAddress ?? "unknown";
  if (trustProxy()) {
    const forwarded = req.headers["x-forwarded-for"];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim();
    if (first) address = first;
  }
  req.headers[CLIENT_ADDRESS_HEADER] = address.replace(/^::ffff:/, "");
}

/** The stamped address ("unknown" outside the server, e.g. in tests calling handlers directly). */
export function clientAddress(headers: Headers): string {
  return headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown";
}
