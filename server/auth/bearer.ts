/**
 * Request authentication of the APIs. One principal shape whatever the credential:
 * - `authenticate(req)`: `Authorization: Bearer <token>` on /api/v1: a bearer token created in
 *   /admin/tokens, or the bootstrap credential;
 * - `authenticateAccessToken(req)`: `X-Access-Token` (detection API; counts a call against the
 *   token's monthly quota, 403 past it);
 * - `authenticateApiKey(req)`: `X-API-Key` (vehicle and data APIs).
 * The bootstrap credential is OBSCURA_API_TOKEN, or when it is not set a random token generated
 * once into OBSCURA_DATA_DIR/api-token (mode 0600), so a fresh install is never open; it is
 * accepted by all three, with no quota, for automation that runs before any admin exists.
 * Tokens are compared in constant time (bootstrap) or looked up by SHA-256 (admin tokens) and
 * never logged or echoed.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";
import { config } from "../config";
import { log } from "../log";
import { authenticateToken, countCall, type TokenKind } from "../identity/tokens";

export interface Principal {
  kind: "bootstrap" | "token" | "user";
  /** Token or user id ("bootstrap" for the bootstrap credential). */
  id: string;
  /** A non-secret label for logs: the token's or user's name. */
  name: string;
  role: "admin" | "reviewer" | "api";
  tokenKind?: TokenKind;
  /** Set for an embed token (docs/embedding.md): the only project (and session) it may reach. */
  scope?: { projectId: string; sessionId?: string; origin: string };
}

const BOOTSTRAP: Principal = { kind: "bootstrap", id: "bootstrap", name: "api-token", role: "api" };

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

function isBootstrap(token: string): boolean {
  return crypto.timingSafeEqual(digest(token), acceptedDigest());
}

async function byToken(kind: TokenKind, token: string): Promise<Principal> {
  if (isBootstrap(token)) return BOOTSTRAP;
  const row = await authenticateToken(kind, token);
  if (kind === "access") await countCall(row);
  return { kind: "token", id: row.id, name: row.name, role: "api", tokenKind: kind };
}

export async function authenticate(req: Request): Promise<Principal> {
  const header = req.headers.get("authorization");
  if (!header) throw new ObscuraError("UNAUTHENTICATED", "missing Authorization header; send Authorization: Bearer <token>");
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new ObscuraError("UNAUTHENTICATED", "Authorization header must be of the form: Bearer <token>");
  return byToken("bearer", m[1]!);
}

function headerToken(req: Request, name: string): string {
  const v = req.headers.get(name)?.trim();
  if (!v) throw new ObscuraError("UNAUTHENTICATED", `missing ${name} header`);
  return v;
}

export function authenticateAccessToken(req: Request): Promise<Principal> {
  return byToken("access", headerToken(req, "X-Access-Token"));
}

export function authenticateApiKey(req: Request): Promise<Principal> {
  return byToken("apikey", headerToken(req, "X-API-Key"));
}
