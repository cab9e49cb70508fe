/**
 * Which network addresses http(s) inputs may reach (server-side request forgery protection, for
 * the redaction API's inputs and the annotation API's imageUri alike), from OBSCURA_HTTP_DENY:
 *   link-local (default)  169.254.0.0/16 and fe80::/10: cloud metadata services and the like
 *   private               also loopback, RFC 1918, CGNAT, unique-local IPv6 and unspecified addresses
 *                         (a server reachable from the internet that should only fetch public URLs)
 *   none                  no restriction
 * The check runs on the address actually connected to: every DNS answer (so a name that resolves
 * to a forbidden address is refused, also after a redirect) and literal IP hosts.
 */
import dns from "node:dns";
import net from "node:net";
import { ObscuraError } from "@/lib/errors";

export type DenyPolicy = "link-local" | "private" | "none";

export function denyPolicy(raw = process.env.OBSCURA_HTTP_DENY): DenyPolicy {
  const v = (raw ?? "").trim().toLowerCase();
  if (!v) return "link-local";
  if (v === "link-local" || v === "private" || v === "none") return v;
  throw new ObscuraError("FAILED_PRECONDITION", `OBSCURA_HTTP_DENY must be link-local, private or none, not ${JSON.stringify(raw)}`);
}

function blockList(policy: DenyPolicy): net.BlockList {
  const b = new net.BlockList();
  if (policy === "none") return b;
  b.addSubnet("169.254.0.0", 16, "ipv4");
  b.addSubnet("fe80::", 10, "ipv6");
  if (policy === "private") {
    for (const [a, p] of [["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["172.16.0.0", 12], ["192.168.0.0", 16]] as const) b.addSubnet(a, p, "ipv4");
    b.addSubnet("fc00::", 7, "ipv6");
    b.addAddress("::1", "ipv6");
    b.addAddress("::", "ipv6");
  }
  return b;
}

/** Throws PERMISSION_DENIED when `address` (an IP) may not be reached under `policy`. */
export function checkAddress(address: string, host: string, policy = denyPolicy()): void {
  if (policy === "none") return;
  let ip = address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) ip = mapped[1]!;
  const family = net.isIP(ip);
  if (!family) return;
  if (blockList(policy).check(ip, family === 4 ? "ipv4" : "ipv6")) {
    throw new ObscuraError(
      "PERMISSION_DENIED",
      `${host} resolves to ${ip}, a ${policy === "private" ? "private, loopback or link-local" : "link-local"} address that inputs may not reach (OBSCURA_HTTP_DENY=${policy})`,
    );
  }
}

/** A dns.lookup for sockets that refuses forbidden addresses (undici's connect `lookup` option). */
export function guardedLookup(policy = denyPolicy()): net.LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      try {
        for (const a of addresses) checkAddress(a.address, hostname, policy);
      } catch (e) {
        return callback(e as Error, "", 0);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), "", 0);
      callback(null, first.address, first.family);
    });
  }) as net.LookupFunction;
}
