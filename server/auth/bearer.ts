/**
 * Bearer-token authentication of /api/v1. The accepted token is OBSCURA_API_TOKEN; when it is not
 * set, a random token is generated once and kept in OBSCURA_DATA_DIR/api-token (mode 0600), so a
 * fresh install is never open. Tokens are compared in constant time and never logged.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { config } from "../config";
import { log } from "../log";

export interface Principal {
  kind: "api-token";
  /** A non-secret label for logs. */
  label: string;
}

const digest = (s: string) => crypto.createHash("sha256").update(s, "utf8").digest();

let tokenDigest: Buffer | null = null;

export function apiTokenFile(): string {
  return path.join(config().dataDir, "api-token");
}

/** The digest of the accepted token, creating the token file on first use when no env token is set. */
function acceptedDigest(): Buffer {
  if (tokenDigest) return tokenDigest;
  const envToken = config().apiToken;
  if (envToken) return (tokenDigest = digest(envToken));
  const file = apiTokenFile();
  let token: string;
  try {
    token = fs.readFileSync(file, "utf8").trim();
  } catch {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    token = crypto.randomBytes(32).toString("base64url");
    fs.writeFileSync(file, token + "\n", { mode: 0o600, flag: "wx" });
    log.info("no OBSCURA_API_TOKEN set: generated an API token", { file });
  }
  return (tokenDigest = digest(token));
}

/** Makes sure a token exists (called at start so the log says where it is). */
export function ensureApiToken(): void {
  acceptedDigest();
}

export function resetAuthCache(): void {
  tokenDigest = null;
}

export function authenticate(req: Request): Principal {
  const header = req.headers.get("authorization");
  if (!header) throw new ObscuraError("UNAUTHENTICATED", "missing Authorization header; send Authorization: Bearer <token>");
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new ObscuraError("UNAUTHENTICATED", "Authorization header must be of the form: Bearer <token>");
  const given = digest(m[1]!);
  if (!crypto.timingSafeEqual(given, acceptedDigest())) throw new ObscuraError("UNAUTHENTICATED", "invalid bearer token");
  return { kind: "api-token", label: "api-token" };
}
