/**
 * Checking a password at sign-in, with two brakes on guessing:
 * - per account: after OBSCURA_SIGNIN_MAX_FAILURES (5) failures in a row the account locks for
 *   OBSCURA_SIGNIN_LOCK_MINUTES (15); a success resets the count;
 * - per client address: more than OBSCURA_SIGNIN_MAX_ADDRESS_FAILURES (20) failures within
 *   OBSCURA_SIGNIN_WINDOW_MINUTES (15) block that address for the same lock time, whatever the
 *   usernames tried.
 * The client learns only "invalid", "locked" or "throttled"; the audit log records the real
 * reason (unknown user, wrong password, disabled...). Unknown usernames cost a dummy argon2
 * verification, so timing does not tell which usernames exist.
 */
import { and, eq, sql } from "drizzle-orm";
import { db as database, type Db } from "../db/client";
import { signInThrottle, users } from "../db/schema";
import { audit } from "./audit";
import { dummyVerify, verifyPassword } from "./passwords";
import { findUserByName, publicUser, type PublicUser } from "./users";

export interface SignInPolicy {
  maxFailures: number;
  lockMs: number;
  maxAddressFailures: number;
  windowMs: number;
}

const envInt = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};

export function signInPolicy(): SignInPolicy {
  return {
    maxFailures: envInt("OBSCURA_SIGNIN_MAX_FAILURES", 5),
    lockMs: envInt("OBSCURA_SIGNIN_LOCK_MINUTES", 15) * 60_000,
    maxAddressFailures: envInt("OBSCURA_SIGNIN_MAX_ADDRESS_FAILURES", 20),
    windowMs: envInt("OBSCURA_SIGNIN_WINDOW_MINUTES", 15) * 60_000,
  };
}

export type SignInResult =
  | { ok: true; user: PublicUser }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "locked"; until: Date }
  | { ok: false; reason: "throttled"; until: Date };

async function addressBlockedUntil(d: Db, key: string, now: Date): Promise<Date | null> {
  const [row] = await d.select().from(signInThrottle).where(eq(signInThrottle.key, key)).limit(1);
  return row?.blockedUntil && row.blockedUntil > now ? row.blockedUntil : null;
}

/** Counts a failure from `key` in the current window; blocks the address past the limit. */
async function addressFailed(d: Db, key: string, now: Date, p: SignInPolicy): Promise<void> {
  const windowStart = new Date(now.getTime() - p.windowMs);
  const [row] = await d
    .insert(signInThrottle)
    .values({ key, failures: 1, windowStart: now })
    .onConflictDoUpdate({
      target: signInThrottle.key,
      set: {
        failures: sql`case when ${signInThrottle.windowStart} < ${windowStart} then 1 else ${signInThrottle.failures} + 1 end`,
        windowStart: sql`case when ${signInThrottle.windowStart} < ${windowStart} then ${now} else ${signInThrottle.windowStart} end`,
      },
    })
    .returning();
  if (row && row.failures > p.maxAddressFailures) {
    await d.update(signInThrottle).set({ blockedUntil: new Date(now.getTime() + p.lockMs) }).where(eq(signInThrottle.key, key));
  }
}

async function wasDeleted(d: Db, name: string): Promise<boolean> {
  if (!name || name.length > 64) return false;
  const [row] = await d.select({ id: users.id }).from(users).where(and(eq(users.username, name), eq(users.status, "deleted"))).limit(1);
  return !!row;
}

export async function verifyCredentials(
  username: string,
  password: string,
  opts: { ip?: string; now?: Date; policy?: SignInPolicy } = {},
): Promise<SignInResult> {
  const d = await database();
  const now = opts.now ?? new Date();
  const p = opts.policy ?? signInPolicy();
  const ip = opts.ip ?? "unknown";
  const key = `addr:${ip}`;
  const name = String(username ?? "").trim().toLowerCase();
  const shown = name.slice(0, 64); // what the audit log keeps of whatever was typed
  const fail = async (reason: string, extra: Record<string, unknown> = {}) => {
    await audit({ actor: shown || "(empty)", action: "sign-in.failure", target: shown || null, ip, details: { reason, ...extra } }, d);
  };

  const blocked = await addressBlockedUntil(d, key, now);
  if (blocked) {
    await fail("address throttled");
    return { ok: false, reason: "throttled", until: blocked };
  }
  const u = name && name.length <= 64 ? await findUserByName(name, d) : null;
  if (!u) {
    await dummyVerify(String(password ?? ""));
    await addressFailed(d, key, now, p);
    await fail((await wasDeleted(d, name)) ? "user deleted" : "unknown user");
    return { ok: false, reason: "invalid" };
  }
  if (u.lockedUntil && u.lockedUntil > now) {
    await dummyVerify(String(password ?? ""));
    await fail("account locked", { until: u.lockedUntil.toISOString() });
    return { ok: false, reason: "locked", until: u.lockedUntil };
  }
  const good = await verifyPassword(u.passwordHash, String(password ?? ""));
  if (!good) {
    await addressFailed(d, key, now, p);
    // Increment in SQL so concurrent guesses all count; lock at the limit.
    const [row] = await d
      .update(users)
      .set({ failedSignIns: sql`${users.failedSignIns} + 1`, lockedUntil: null })
      .where(eq(users.id, u.id))
      .returning();
    const failures = row?.failedSignIns ?? u.failedSignIns + 1;
    if (failures >= p.maxFailures) {
      const until = new Date(now.getTime() + p.lockMs);
      await d.update(users).set({ lockedUntil: until, failedSignIns: 0 }).where(eq(users.id, u.id));
      await fail("wrong password", { failures });
      await audit({ actor: "system", action: "user.locked", target: u.username, ip, details: { until: until.toISOString(), failures } }, d);
      return { ok: false, reason: "locked", until };
    }
    await fail("wrong password", { failures });
    return { ok: false, reason: "invalid" };
  }
  if (u.status !== "active") {
    await addressFailed(d, key, now, p);
    await fail(`user ${u.status}`);
    return { ok: false, reason: "invalid" };
  }
  const [row] = await d.update(users).set({ failedSignIns: 0, lockedUntil: null, lastSignInAt: now }).where(eq(users.id, u.id)).returning();
  await audit({ actor: u.username, action: "sign-in.success", target: u.username, ip }, d);
  return { ok: true, user: publicUser(row!) };
}
