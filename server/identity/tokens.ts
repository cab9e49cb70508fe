/**
 * API tokens created by admins (docs/admin.md#api-tokens): `bearer` (Authorization: Bearer, the
 * redaction API), `access` (X-Access-Token, the detection API, with a monthly quota) and `apikey`
 * (X-API-Key, the vehicle and data APIs).
 *
 * A token is `obs_<b|a|k>_<43 base64url characters>` (256 random bits), shown once; the database
 * keeps its SHA-256 (enough for a random secret of this size; no slow hash needed) and a display
 * prefix. Lookups are by hash, so a revoked token fails on its next call: nothing is cached.
 * `lastUsedAt` is written at most once a minute per token per process.
 */
import crypto from "node:crypto";
import { and, desc, eq, sql } from "drizzle-orm";
import { ObscuraError } from "@/lib/errors";
import { db as database } from "../db/client";
import { apiTokens, tokenUsage, type ApiTokenRow } from "../db/schema";
import { audit, type Actor } from "./audit";

export type TokenKind = "bearer" | "access" | "apikey";
export const TOKEN_KINDS: readonly TokenKind[] = ["bearer", "access", "apikey"];
const LETTER: Record<TokenKind, string> = { bearer: "b", access: "a", apikey: "k" };
const HEADER: Record<TokenKind, string> = { bearer: "Authorization: Bearer", access: "X-Access-Token", apikey: "X-API-Key" };

export const tokenDigest = (token: string) => crypto.createHash("sha256").update(token, "utf8").digest("hex");

export interface TokenInfo {
  id: string;
  name: string;
  kind: TokenKind;
  prefix: string;
  monthlyQuota: number | null;
  createdBy: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  callsThisMonth: number;
}

/** "2026-11": quotas count calendar months in UTC. */
export const monthOf = (d = new Date()) => d.toISOString().slice(0, 7);
const nextMonthStart = (d = new Date()) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));

export async function createToken(
  input: { name: string; kind: TokenKind; monthlyQuota?: number | null },
  actor: Actor,
): Promise<{ token: string; info: TokenInfo }> {
  const name = String(input.name ?? "").trim();
  if (!name || name.length > 100) throw new ObscuraError("INVALID_ARGUMENT", "a token needs a name of 1-100 characters", { details: [{ field: "name", problem: "1-100 characters" }] });
  if (!TOKEN_KINDS.includes(input.kind)) throw new ObscuraError("INVALID_ARGUMENT", `kind must be one of ${TOKEN_KINDS.join(", ")}`, { details: [{ field: "kind", problem: TOKEN_KINDS.join(", ") }] });
  const quota = input.kind === "access" && input.monthlyQuota ? input.monthlyQuota : null;
  if (quota !== null && (!Number.isInteger(quota) || quota < 1)) throw new ObscuraError("INVALID_ARGUMENT", "monthlyQuota must be a whole number of calls, at least 1", { details: [{ field: "quota", problem: "a whole number >= 1" }] });
  const token = `obs_${LETTER[input.kind]}_${crypto.randomBytes(32).toString("base64url")}`;
  const d = await database();
  const [row] = await d
    .insert(apiTokens)
    .values({ id: crypto.randomUUID(), name, kind: input.kind, prefix: token.slice(0, 12), tokenHash: tokenDigest(token), monthlyQuota: quota, createdBy: actor.username })
    .returning();
  await audit({ actor: actor.username, action: "token.create", target: name, ip: actor.ip, details: { kind: input.kind, prefix: row!.prefix, monthlyQuota: quota } }, d);
  return { token, info: { ...info(row!), callsThisMonth: 0 } };
}

function info(r: ApiTokenRow): Omit<TokenInfo, "callsThisMonth"> {
  return { id: r.id, name: r.name, kind: r.kind, prefix: r.prefix, monthlyQuota: r.monthlyQuota, createdBy: r.createdBy, createdAt: r.createdAt, lastUsedAt: r.lastUsedAt, revokedAt: r.revokedAt };
}

export async function listTokens(): Promise<TokenInfo[]> {
  const d = await database();
  const month = monthOf();
  const rows = await d
    .select({ t: apiTokens, calls: tokenUsage.calls })
    .from(apiTokens)
    .leftJoin(tokenUsage, and(eq(tokenUsage.tokenId, apiTokens.id), eq(tokenUsage.month, month)))
    .orderBy(desc(apiTokens.createdAt));
  return rows.map((r) => ({ ...info(r.t), callsThisMonth: r.calls ?? 0 }));
}

export async function revokeToken(id: string, actor: Actor): Promise<void> {
  const d = await database();
  const [row] = await d
    .update(apiTokens)
    .set({ revokedAt: new Date(), revokedBy: actor.username })
    .where(and(eq(apiTokens.id, id), sql`${apiTokens.revokedAt} is null`))
    .returning();
  if (!row) {
    const [exists] = await d.select().from(apiTokens).where(eq(apiTokens.id, id)).limit(1);
    if (!exists) throw new ObscuraError("NOT_FOUND", `no token ${JSON.stringify(id)}`);
    return; // revoked already
  }
  await audit({ actor: actor.username, action: "token.revoke", target: row.name, ip: actor.ip, details: { kind: row.kind, prefix: row.prefix } }, d);
}

const lastTouched = new Map<string, number>();

/** The token row for a presented token of `kind`, or 401 saying what is wrong (never echoing it). */
export async function authenticateToken(kind: TokenKind, token: string): Promise<ApiTokenRow> {
  const d = await database();
  const [row] = await d.select().from(apiTokens).where(eq(apiTokens.tokenHash, tokenDigest(token))).limit(1);
  if (!row) throw new ObscuraError("UNAUTHENTICATED", unknownToken(kind));
  if (row.revokedAt) throw new ObscuraError("UNAUTHENTICATED", `this token (${row.prefix}…) was revoked on ${row.revokedAt.toISOString().slice(0, 10)}`);
  if (row.kind !== kind) throw new ObscuraError("UNAUTHENTICATED", `this is ${article(row.kind)} ${row.kind} token; this API takes ${HEADER[kind]} with ${article(kind)} ${kind} token`);
  const now = Date.now();
  if (now - (lastTouched.get(row.id) ?? 0) > 60_000) {
    lastTouched.set(row.id, now);
    await d.update(apiTokens).set({ lastUsedAt: new Date(now) }).where(eq(apiTokens.id, row.id));
  }
  return row;
}

const article = (k: string) => (/^[aeiou]/.test(k) ? "an" : "a");

/** The 401 for a token no one issued; /api/v1 keeps the message its clients have always seen. */
const unknownToken = (kind: TokenKind) =>
  kind === "bearer" ? "invalid bearer token" : `unknown token: send a valid ${HEADER[kind]} token (admins create them in /admin/tokens)`;

/** Counts one call of an access token this month; 403 past its quota (increment and check in one statement). */
export async function countCall(token: Pick<ApiTokenRow, "id" | "monthlyQuota">, now = new Date()): Promise<number> {
  const d = await database();
  const [row] = await d
    .insert(tokenUsage)
    .values({ tokenId: token.id, month: monthOf(now), calls: 1 })
    .onConflictDoUpdate({ target: [tokenUsage.tokenId, tokenUsage.month], set: { calls: sql`${tokenUsage.calls} + 1` } })
    .returning();
  const calls = row!.calls;
  if (token.monthlyQuota !== null && calls > token.monthlyQuota) {
    throw new ObscuraError(
      "PERMISSION_DENIED",
      `monthly quota of ${token.monthlyQuota} calls used up for this token; it resets on ${nextMonthStart(now).toISOString().slice(0, 10)}`,
    );
  }
  return calls;
}
