/**
 * Users: created by admins (or by first-run setup), disabled, re-enabled, deleted (the row stays
 * with status "deleted", so a deleted user's past edits keep their author's name, and the username
 * can be given to someone new). The last active admin cannot be disabled, deleted or demoted;
 * active users never exceed the licence's seats. Changes that could break either rule run in a
 * transaction holding one advisory lock, so two admins acting at once cannot both pass the check
 * (two concurrent "add user" past the last seat, or two admins disabling each other).
 */
import crypto from "node:crypto";
import { and, asc, count, eq, ne, sql } from "drizzle-orm";
import { ObscuraError } from "@/lib/errors";
import { db as database, type Db } from "../db/client";
import { users, type UserRow } from "../db/schema";
import { seatLimit } from "../license";
import { audit, type Actor } from "./audit";
import { assertPassword, hashPassword, normaliseUsername, verifyPassword } from "./passwords";

export type Role = "admin" | "reviewer";

/** A user as pages and APIs show it: never the password hash. */
export interface PublicUser {
  id: string;
  username: string;
  displayName: string | null;
  role: Role;
  status: "active" | "disabled" | "deleted";
  lastSignInAt: Date | null;
  lockedUntil: Date | null;
  createdAt: Date;
}

export function publicUser(u: UserRow): PublicUser {
  return { id: u.id, username: u.username, displayName: u.displayName, role: u.role, status: u.status, lastSignInAt: u.lastSignInAt, lockedUntil: u.lockedUntil, createdAt: u.createdAt };
}

const notFound = (id: string) => new ObscuraError("NOT_FOUND", `no user ${JSON.stringify(id)}`);

async function activeCount(d: Db, role?: Role): Promise<number> {
  const [row] = await d
    .select({ n: count() })
    .from(users)
    .where(role ? and(eq(users.status, "active"), eq(users.role, role)) : eq(users.status, "active"));
  return Number(row?.n ?? 0);
}

/** Where the seat limit comes from: the licence (server/license), or a test's own function. */
export type SeatLimit = () => Promise<number>;

async function assertSeat(d: Db, limit: number): Promise<void> {
  const active = await activeCount(d);
  if (active >= limit) {
    throw new ObscuraError("PERMISSION_DENIED", `all ${limit} seat${limit === 1 ? "" : "s"} of the licence are in use by active users: disable a user or install a licence with more seats`);
  }
}

const USERS_LOCK = 0x0b5c0b; // advisory lock id: serialises changes to who is active and who is admin

/**
 * Runs `fn` in a transaction holding the users lock. Everything `fn` reads or writes must go
 * through `tx` (PGlite has one connection: a query outside the transaction would wait for it).
 */
async function underUsersLock<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
  const d = await database();
  return d.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${USERS_LOCK}::bigint)`);
    return fn(tx as unknown as Db);
  });
}

async function get(d: Db, id: string): Promise<UserRow> {
  const [u] = await d.select().from(users).where(eq(users.id, id)).limit(1);
  if (!u || u.status === "deleted") throw notFound(id);
  return u;
}

export interface NewUser {
  username: string;
  password: string;
  role: Role;
  displayName?: string;
}

export async function createUser(input: NewUser, actor: Actor | null, opts: { seatLimit?: SeatLimit } = {}): Promise<PublicUser> {
  const username = normaliseUsername(input.username);
  assertPassword(input.password, username);
  if (input.role !== "admin" && input.role !== "reviewer") throw new ObscuraError("INVALID_ARGUMENT", `role must be admin or reviewer, not ${JSON.stringify(input.role)}`, { details: [{ field: "role", problem: "admin or reviewer" }] });
  const displayName = input.displayName?.trim() ? input.displayName.trim().slice(0, 100) : null;
  const limit = await (opts.seatLimit ?? seatLimit)();
  const passwordHash = await hashPassword(input.password); // slow: before taking the lock
  try {
    return await underUsersLock(async (tx) => {
      await assertSeat(tx, limit);
      const [row] = await tx.insert(users).values({ id: crypto.randomUUID(), username, displayName, passwordHash, role: input.role, passwordChangedAt: new Date() }).returning();
      await audit({ actor: actor?.username ?? "system", action: "user.create", target: username, ip: actor?.ip, details: { role: input.role } }, tx);
      return publicUser(row!);
    });
  } catch (e) {
    const code = (e as { code?: string; cause?: { code?: string } }).cause?.code ?? (e as { code?: string }).code;
    if (code === "23505") {
      throw new ObscuraError("ALREADY_EXISTS", `the username ${username} is taken`, { details: [{ field: "username", problem: `${username} is taken` }] });
    }
    throw e;
  }
}

export async function listUsers(opts: { includeDeleted?: boolean } = {}): Promise<PublicUser[]> {
  const d = await database();
  const q = d.select().from(users);
  const rows = await (opts.includeDeleted ? q : q.where(ne(users.status, "deleted"))).orderBy(asc(users.username));
  return rows.map(publicUser);
}

/** The user with this id if they may still use the UI (active), else null. */
export async function findActiveUser(id: string): Promise<PublicUser | null> {
  if (!id) return null;
  const d = await database();
  const [u] = await d.select().from(users).where(and(eq(users.id, id), eq(users.status, "active"))).limit(1);
  return u ? publicUser(u) : null;
}

export async function findUserByName(username: string, d?: Db): Promise<UserRow | null> {
  const x = d ?? (await database());
  const [u] = await x
    .select()
    .from(users)
    .where(and(eq(users.username, String(username).trim().toLowerCase()), ne(users.status, "deleted")))
    .limit(1);
  return u ?? null;
}

async function assertNotLastAdmin(d: Db, u: UserRow, what: string): Promise<void> {
  if (u.role === "admin" && u.status === "active" && (await activeCount(d, "admin")) <= 1) {
    throw new ObscuraError("FAILED_PRECONDITION", `${u.username} is the only active administrator and cannot be ${what}: make another user an administrator first`);
  }
}

export async function disableUser(id: string, actor: Actor): Promise<PublicUser> {
  return underUsersLock(async (tx) => {
    const u = await get(tx, id);
    await assertNotLastAdmin(tx, u, "disabled");
    const [row] = await tx.update(users).set({ status: "disabled", updatedAt: new Date() }).where(eq(users.id, id)).returning();
    await audit({ actor: actor.username, action: "user.disable", target: u.username, ip: actor.ip }, tx);
    return publicUser(row!);
  });
}

export async function enableUser(id: string, actor: Actor, opts: { seatLimit?: SeatLimit } = {}): Promise<PublicUser> {
  const limit = await (opts.seatLimit ?? seatLimit)();
  return underUsersLock(async (tx) => {
    const u = await get(tx, id);
    if (u.status === "active") return publicUser(u);
    await assertSeat(tx, limit);
    const [row] = await tx.update(users).set({ status: "active", failedSignIns: 0, lockedUntil: null, updatedAt: new Date() }).where(eq(users.id, id)).returning();
    await audit({ actor: actor.username, action: "user.enable", target: u.username, ip: actor.ip }, tx);
    return publicUser(row!);
  });
}

export async function deleteUser(id: string, actor: Actor): Promise<void> {
  await underUsersLock(async (tx) => {
    const u = await get(tx, id);
    await assertNotLastAdmin(tx, u, "deleted");
    await tx.update(users).set({ status: "deleted", deletedAt: new Date(), updatedAt: new Date() }).where(eq(users.id, id));
    await audit({ actor: actor.username, action: "user.delete", target: u.username, ip: actor.ip }, tx);
  });
}

export async function setRole(id: string, role: Role, actor: Actor): Promise<PublicUser> {
  if (role !== "admin" && role !== "reviewer") throw new ObscuraError("INVALID_ARGUMENT", `role must be admin or reviewer, not ${JSON.stringify(role)}`, { details: [{ field: "role", problem: "admin or reviewer" }] });
  return underUsersLock(async (tx) => {
    const u = await get(tx, id);
    if (u.role === role) return publicUser(u);
    if (role === "reviewer") await assertNotLastAdmin(tx, u, "made a reviewer");
    const [row] = await tx.update(users).set({ role, updatedAt: new Date() }).where(eq(users.id, id)).returning();
    await audit({ actor: actor.username, action: "user.role", target: u.username, ip: actor.ip, details: { role } }, tx);
    return publicUser(row!);
  });
}

/** An admin sets a new password (and unlocks the account). */
export async function resetPassword(id: string, password: string, actor: Actor): Promise<void> {
  const d = await database();
  const u = await get(d, id);
  assertPassword(password, u.username);
  await d
    .update(users)
    .set({ passwordHash: await hashPassword(password), passwordChangedAt: new Date(), failedSignIns: 0, lockedUntil: null, updatedAt: new Date() })
    .where(eq(users.id, id));
  await audit({ actor: actor.username, action: "user.reset-password", target: u.username, ip: actor.ip }, d);
}

/** A user changes their own password, giving the current one. */
export async function changeOwnPassword(id: string, current: string, next: string, ip?: string): Promise<void> {
  const d = await database();
  const u = await get(d, id);
  if (!(await verifyPassword(u.passwordHash, current))) {
    throw new ObscuraError("INVALID_ARGUMENT", "the current password is wrong", { details: [{ field: "current", problem: "wrong password" }] });
  }
  assertPassword(next, u.username);
  await d.update(users).set({ passwordHash: await hashPassword(next), passwordChangedAt: new Date(), updatedAt: new Date() }).where(eq(users.id, id));
  await audit({ actor: u.username, action: "user.change-password", target: u.username, ip }, d);
}

/** Whether any admin exists (first-run setup is done once one does). */
export async function adminExists(d?: Db): Promise<boolean> {
  const x = d ?? (await database());
  const [row] = await x.select({ n: count() }).from(users).where(and(eq(users.role, "admin"), ne(users.status, "deleted")));
  return Number(row?.n ?? 0) > 0;
}

