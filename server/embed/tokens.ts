/**
 * Embedding the editor in another product (docs/embedding.md): the origins allowed to frame our
 * pages (OBSCURA_EMBED_ORIGINS, sent as CSP frame-ancestors), and short-lived signed embed tokens
 * that a host product's backend mints with an admin credential. A token names a user (the editor
 * acts as them: acl, "edited by"), a project, optionally one session, and the parent origin the
 * editor may post events to. It is a JWT (HS256) whose key is derived from the server's auth
 * secret with HKDF and its own label, so it can never be confused with a sign-in cookie.
 */
import crypto from "node:crypto";
import { jwtVerify, SignJWT, errors as joseErrors } from "jose";
import { ObscuraError } from "@/lib/errors";
import type { EmbedTokenRequest } from "@/lib/api/embed";
import { authSecret } from "../identity/setup";
import { findActiveUser, findUserByName } from "../identity/users";
import { audit } from "../identity/audit";
import type { Principal } from "../auth/bearer";

const TYP = "obscura-embed";

/** An origin as browsers send it: scheme://host[:port], nothing more. */
export function parseOrigin(value: string): string | null {
  try {
    const u = new URL(value);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    if (u.pathname !== "/" || u.search || u.hash || u.username || u.password) return null;
    return u.origin;
  } catch {
    return null;
  }
}

/** OBSCURA_EMBED_ORIGINS (space or comma separated); a malformed entry is an error naming it. */
export function embedOrigins(env = process.env.OBSCURA_EMBED_ORIGINS): string[] {
  const out: string[] = [];
  for (const raw of (env ?? "").split(/[\s,]+/).filter(Boolean)) {
    const o = parseOrigin(raw.replace(/\/$/, ""));
    if (!o) throw new Error(`OBSCURA_EMBED_ORIGINS: ${JSON.stringify(raw)} is not an origin; write scheme://host[:port], e.g. https://portal.example.com`);
    out.push(o);
  }
  return out;
}

/** The Content-Security-Policy every page carries: only these origins (and ours) may frame it. */
export function frameAncestorsPolicy(origins: readonly string[]): string {
  return `frame-ancestors 'self'${origins.map((o) => ` ${o}`).join("")}`;
}

const keys = new Map<string, Uint8Array>();
async function signingKey(): Promise<Uint8Array> {
  const secret = await authSecret();
  let k = keys.get(secret);
  if (!k) {
    k = new Uint8Array(crypto.hkdfSync("sha256", Buffer.from(secret, "utf8"), Buffer.alloc(0), Buffer.from("obscura-embed-token/v1"), 32));
    keys.set(secret, k);
  }
  return k;
}

export interface MintedEmbedToken {
  token: string;
  expiresAt: string;
  url: string;
}

/** Mints a token (admins and API credentials only); `base` is the public URL of this server. */
export async function mintEmbedToken(who: Principal, req: EmbedTokenRequest, base: string, ip?: string): Promise<MintedEmbedToken> {
  if (who.role === "reviewer" || who.scope) throw new ObscuraError("PERMISSION_DENIED", "only administrators and API tokens may mint embed tokens (not reviewers, not embed tokens)");
  const allowed = embedOrigins();
  if (!allowed.length) {
    throw new ObscuraError("INVALID_ARGUMENT", "embedding is off: set OBSCURA_EMBED_ORIGINS to the origins allowed to frame the editor", { details: [{ field: "origin", problem: "no embedding origins are configured" }] });
  }
  const origin = parseOrigin(req.origin.replace(/\/$/, ""));
  if (!origin || !allowed.includes(origin)) {
    throw new ObscuraError("INVALID_ARGUMENT", `origin ${JSON.stringify(req.origin)} is not allowed to embed; allowed: ${allowed.join(", ")}`, { details: [{ field: "origin", problem: `must be one of ${allowed.join(", ")}` }] });
  }
  const user = await findUserByName(req.username);
  if (!user || user.status !== "active") {
    throw new ObscuraError("INVALID_ARGUMENT", `no active user ${JSON.stringify(req.username)}`, { details: [{ field: "username", problem: "must name an existing, enabled user" }] });
  }
  const ttl = req.ttlSeconds ?? 3600;
  const exp = Math.floor(Date.now() / 1000) + ttl;
  const token = await new SignJWT({ typ: TYP, name: user.username, pid: req.projectId, ...(req.sessionId ? { sid: req.sessionId } : {}), origin })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(user.id)
    .setJti(crypto.randomUUID())
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(await signingKey());
  await audit({ actor: who.name, action: "embed.mint", target: user.username, ip, details: { projectId: req.projectId, sessionId: req.sessionId ?? null, origin, ttlSeconds: ttl } });
  const path = `/embed/projects/${encodeURIComponent(req.projectId)}${req.sessionId ? `/videos/${encodeURIComponent(req.sessionId)}` : ""}`;
  return { token, expiresAt: new Date(exp * 1000).toISOString(), url: `${base.replace(/\/$/, "")}${path}?token=${encodeURIComponent(token)}` };
}

export interface EmbedGrant {
  user: { id: string; username: string; role: "admin" | "reviewer" };
  projectId: string;
  sessionId?: string;
  origin: string;
  expiresAt: string;
}

/** A JWT's shape (three base64url parts): how Authorization tells embed tokens from API tokens. */
export const looksLikeEmbedToken = (t: string) => /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(t);

/** Checks signature, type, expiry and that the user may still sign in; 401 otherwise. */
export async function verifyEmbedToken(token: string): Promise<EmbedGrant> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, await signingKey(), { algorithms: ["HS256"] }));
  } catch (e) {
    if (e instanceof joseErrors.JWTExpired) {
      const exp = (e.payload as { exp?: number }).exp;
      throw new ObscuraError("UNAUTHENTICATED", `embed token expired${exp ? ` at ${new Date(exp * 1000).toISOString()}` : ""}: ask the host application for a new one`);
    }
    throw new ObscuraError("UNAUTHENTICATED", "embed token invalid");
  }
  if (payload.typ !== TYP || typeof payload.sub !== "string" || typeof payload.pid !== "string" || typeof payload.origin !== "string") {
    throw new ObscuraError("UNAUTHENTICATED", "embed token invalid");
  }
  const user = await findActiveUser(payload.sub);
  if (!user) throw new ObscuraError("UNAUTHENTICATED", "the embed token's user is disabled or deleted");
  return {
    user: { id: user.id, username: user.username, role: user.role },
    projectId: payload.pid,
    ...(typeof payload.sid === "string" ? { sessionId: payload.sid } : {}),
    origin: payload.origin,
    expiresAt: new Date(Number(payload.exp) * 1000).toISOString(),
  };
}

/** The principal an embed token stands for: its user, limited to its project (and session). */
export function embedPrincipal(g: EmbedGrant): Principal {
  return { kind: "user", id: g.user.id, name: g.user.username, role: g.user.role, scope: { projectId: g.projectId, sessionId: g.sessionId, origin: g.origin } };
}

/** 403 when an embed-scoped principal reaches outside its project or session. */
export function assertInScope(who: Principal, projectId: string, sessionId?: string): void {
  const s = who.scope;
  if (!s) return;
  if (s.projectId !== projectId) throw new ObscuraError("PERMISSION_DENIED", `this embed token is for project ${JSON.stringify(s.projectId)}`);
  if (s.sessionId && sessionId && s.sessionId !== sessionId) throw new ObscuraError("PERMISSION_DENIED", `this embed token is for session ${JSON.stringify(s.sessionId)}`);
}
