/**
 * People and credentials (server/identity, server/auth/bearer.ts) against a real migrated
 * database, on both the embedded PGlite and the PostgreSQL server: password rules, first-run setup
 * (once, even when two race), users and seats, the last admin, sign-in with lockout and per-address
 * throttling, API tokens (hashed, by kind, revocation, monthly quota), and the bootstrap token.
 */
import { describe, expect, it } from "vitest";
import { ObscuraError } from "@/lib/errors";
import { db } from "@/server/db/client";
import { apiTokens, auditLog, settings, users } from "@/server/db/schema";
import {
  authSecret,
  authenticateToken,
  bootstrapFromEnv,
  completeSetup,
  countCall,
  createToken,
  createUser,
  deleteUser,
  disableUser,
  enableUser,
  listAudit,
  listTokens,
  listUsers,
  changeOwnPassword,
  passwordProblem,
  resetPassword,
  revokeToken,
  setRole,
  setupState,
  signInPolicy,
  verifyCredentials,
  type SignInPolicy,
} from "@/server/identity";
import { authenticate, authenticateAccessToken, authenticateApiKey } from "@/server/auth/bearer";
import { canSeeSession } from "@/server/identity/access";
import { loadAuthSecret } from "@/server/identity/setup";
import { useFreshDatabase } from "./helpers/database";

const GOOD = "Correct-Horse-42!";
const actor = { username: "root", ip: "10.0.0.1" };

/** Everything written to stdout and stderr while `fn` runs. */
async function captureOutput(fn: () => Promise<void>): Promise<string> {
  const logged: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const ewrite = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((c: string | Uint8Array) => (logged.push(String(c)), true)) as typeof process.stdout.write;
  process.stderr.write = ((c: string | Uint8Array) => (logged.push(String(c)), true)) as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stdout.write = write;
    process.stderr.write = ewrite;
  }
  return logged.join("");
}

async function refusal(p: Promise<unknown>): Promise<ObscuraError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ObscuraError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("password rules", () => {
  it("say what is missing", () => {
    expect(passwordProblem("short1!A")).toMatch(/at least 12 characters/);
    expect(passwordProblem("x".repeat(257))).toMatch(/at most 256/);
    expect(passwordProblem("Alice-Secret-99", "alice")).toMatch(/must not contain the username/);
    expect(passwordProblem("password1234")).toMatch(/most common/);
    expect(passwordProblem("aaaaaaaaaaaaaaaa")).toMatch(/repeats too few/);
    expect(passwordProblem("lowercaseonly1")).toMatch(/three of/);
    expect(passwordProblem("a long passphrase of words")).toBeNull(); // 20+ characters
    expect(passwordProblem("Alice-Secret-99", "bob")).toBeNull();
    expect(passwordProblem(GOOD)).toBeNull();
  });

  it("lock and throttle numbers default to 5 failures, 15 minutes, 20 per address", () => {
    expect(signInPolicy()).toEqual({ maxFailures: 5, lockMs: 15 * 60_000, maxAddressFailures: 20, windowMs: 15 * 60_000 });
  });
});

const secretsSeen: string[] = [];

const databases = [
  { name: "embedded PGlite", pg: false },
  { name: "PostgreSQL server", pg: true },
];

describe.each(databases)("identity on $name", ({ pg }) => {
  // the default numbers, with a one-minute lock so the test can step past it (via `now`)
  const policy: SignInPolicy = { maxFailures: 5, lockMs: 60_000, maxAddressFailures: 20, windowMs: 15 * 60_000 };
  const seats10 = { seatLimit: async () => 10 };

  useFreshDatabase("identity", { pg, env: { OBSCURA_API_TOKEN: "bootstrap-token-for-tests", AUTH_SECRET: undefined, OBSCURA_LICENSE_PUBLIC_KEYS: undefined } });

  it("first-run setup happens once, even when two race", async () => {
    expect(await setupState()).toEqual({ needsSetup: true });
    expect((await refusal(completeSetup({ username: "root", password: "weak" }))).message).toMatch(/12 characters/);
    const results = await Promise.allSettled([completeSetup({ username: "root", password: GOOD }), completeSetup({ username: "other", password: GOOD })]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(String(lost.reason.message)).toMatch(/setup is already done/);
    expect(await setupState()).toEqual({ needsSetup: false });
    // the headless bootstrap does nothing once an admin exists
    await bootstrapFromEnv({ OBSCURA_ADMIN_USER: "second", OBSCURA_ADMIN_PASSWORD: GOOD } as unknown as NodeJS.ProcessEnv);
    expect((await listUsers()).map((u) => u.username)).toHaveLength(1);
  });

  it("creates users, refuses a taken name and the seat past the evaluation tier's 3", async () => {
    const admin = (await listUsers())[0]!;
    actor.username = admin.username;
    const rita = await createUser({ username: "Rita", password: GOOD, role: "reviewer", displayName: "Rita R." }, actor);
    expect(rita).toMatchObject({ username: "rita", role: "reviewer", status: "active", displayName: "Rita R." });
    expect((await refusal(createUser({ username: "rita", password: GOOD, role: "reviewer" }, actor))).status).toBe("ALREADY_EXISTS");
    expect((await refusal(createUser({ username: "x", password: GOOD, role: "reviewer" }, actor))).message).toMatch(/3-64 characters/);
    await createUser({ username: "sam", password: GOOD, role: "reviewer" }, actor);
    const full = await refusal(createUser({ username: "tom", password: GOOD, role: "reviewer" }, actor));
    expect(full.status).toBe("PERMISSION_DENIED");
    expect(full.message).toMatch(/all 3 seats/);
    const sam = (await listUsers()).find((u) => u.username === "sam")!;
    await disableUser(sam.id, actor);
    const tom = await createUser({ username: "tom", password: GOOD, role: "reviewer" }, actor);
    expect((await refusal(enableUser(sam.id, actor))).message).toMatch(/seats/);
    // a deleted user's name can be given again; the row stays (edits keep their author)
    await deleteUser(tom.id, actor);
    await deleteUser(sam.id, actor);
    const again = await createUser({ username: "tom", password: GOOD, role: "reviewer" }, actor);
    expect(again.id).not.toBe(tom.id);
    const d = await db();
    expect((await d.select().from(users)).filter((u) => u.username === "tom").map((u) => u.status).sort()).toEqual(["active", "deleted"]);
    const actions = (await listAudit({ limit: 50 })).map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(["setup.complete", "user.create", "user.disable", "user.delete"]));
  });

  it("never disables or deletes the last active admin", async () => {
    const admin = (await listUsers()).find((u) => u.role === "admin")!;
    expect((await refusal(disableUser(admin.id, actor))).message).toMatch(/only active administrator/);
    expect((await refusal(deleteUser(admin.id, actor))).message).toMatch(/only active administrator/);
  });

  it("signs in, locks an account after repeated failures, and unlocks after the lock time", async () => {
    const ok = await verifyCredentials("RITA", GOOD, { ip: "10.0.0.2", policy });
    expect(ok.ok && ok.user.username).toBe("rita");
    const t0 = new Date();
    expect(ok.ok && ok.user).toMatchObject({ role: "reviewer", displayName: "Rita R." });
    expect((await listUsers()).find((u) => u.username === "rita")!.lastSignInAt).toBeInstanceOf(Date);
    for (let i = 0; i < 4; i++) expect(await verifyCredentials("rita", "wrong-password", { ip: "10.0.0.2", policy, now: t0 })).toEqual({ ok: false, reason: "invalid" });
    const fifth = await verifyCredentials("rita", "wrong-password", { ip: "10.0.0.2", policy, now: t0 });
    expect(fifth).toEqual({ ok: false, reason: "locked", until: new Date(t0.getTime() + 60_000) });
    // locked: even the right password is refused until the lock ends
    expect(await verifyCredentials("rita", GOOD, { ip: "10.0.0.3", policy, now: new Date(t0.getTime() + 30_000) })).toMatchObject({ ok: false, reason: "locked" });
    const later = await verifyCredentials("rita", GOOD, { ip: "10.0.0.3", policy, now: new Date(t0.getTime() + 61_000) });
    expect(later.ok).toBe(true);
    const audit = await listAudit({ limit: 20 });
    expect(audit.find((a) => a.action === "user.locked")?.target).toBe("rita");
    expect(audit.find((a) => a.action === "sign-in.failure")?.details).toMatchObject({ reason: "account locked" });
    expect(audit.filter((a) => a.action === "sign-in.failure").map((a) => (a.details as { reason: string }).reason)).toContain("wrong password");
    expect(audit[0]).toMatchObject({ action: "sign-in.success", target: "rita", ip: "10.0.0.3" });
  });

  it("throttles an address after too many failures, whatever the usernames", async () => {
    const ip = "10.9.9.9";
    const t0 = new Date();
    // more than 20 failures within the window: the 21st still answers "invalid", then the address is blocked
    for (let i = 0; i < 21; i++) expect(await verifyCredentials(`nobody${i}`, "whatever-password", { ip, policy, now: t0 })).toEqual({ ok: false, reason: "invalid" });
    expect(await verifyCredentials("rita", GOOD, { ip, policy, now: t0 })).toMatchObject({ ok: false, reason: "throttled" });
    expect((await verifyCredentials("rita", GOOD, { ip: "10.9.9.10", policy, now: t0 })).ok).toBe(true);
    // the block lasts the lock time
    expect((await verifyCredentials("rita", GOOD, { ip, policy, now: new Date(t0.getTime() + 61_000) })).ok).toBe(true);
  });

  it("tells the client only 'invalid' for a disabled user, and audits why", async () => {
    const rita = (await listUsers()).find((u) => u.username === "rita")!;
    await disableUser(rita.id, actor);
    expect(await verifyCredentials("rita", GOOD, { ip: "10.0.0.4", policy })).toEqual({ ok: false, reason: "invalid" });
    const last = (await listAudit({ limit: 5 })).find((a) => a.action === "sign-in.failure")!;
    expect(last.details).toMatchObject({ reason: "user disabled" });
    expect(last.target).toBe("rita");
    await enableUser(rita.id, actor);
    const dora = await createUser({ username: "dora", password: GOOD, role: "reviewer" }, actor, seats10);
    await deleteUser(dora.id, actor);
    expect(await verifyCredentials("dora", GOOD, { ip: "10.0.0.4", policy })).toEqual({ ok: false, reason: "invalid" });
    expect((await listAudit({ limit: 1 }))[0]).toMatchObject({ action: "sign-in.failure", details: { reason: "user deleted" } });
    expect(await verifyCredentials("ghost", GOOD, { ip: "10.0.0.4", policy })).toEqual({ ok: false, reason: "invalid" });
    expect((await listAudit({ limit: 1 }))[0]).toMatchObject({ action: "sign-in.failure", details: { reason: "unknown user" } });
  });

  it("keeps seats and the last admin safe when two admins act at once", async () => {
    const active = (await listUsers()).filter((u) => u.status === "active").length;
    const oneLeft = { seatLimit: async () => active + 1 };
    const both = await Promise.allSettled([
      createUser({ username: "uma", password: GOOD, role: "reviewer" }, actor, oneLeft),
      createUser({ username: "vic", password: GOOD, role: "reviewer" }, actor, oneLeft),
    ]);
    expect(both.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(String((both.find((r) => r.status === "rejected") as PromiseRejectedResult).reason.message)).toMatch(/all \d+ seats/);
    // two admins disabling each other: one of them stays
    const root = (await listUsers()).find((u) => u.username === actor.username)!;
    const ada = await createUser({ username: "ada", password: GOOD, role: "admin" }, actor, seats10);
    const duel = await Promise.allSettled([disableUser(root.id, { username: "ada" }), disableUser(ada.id, actor)]);
    expect(duel.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(String((duel.find((r) => r.status === "rejected") as PromiseRejectedResult).reason.message)).toMatch(/only active administrator/);
    expect((await listUsers()).filter((u) => u.role === "admin" && u.status === "active")).toHaveLength(1);
    // back to one admin (root) and the earlier users
    if ((await listUsers()).find((u) => u.id === root.id)!.status !== "active") {
      await enableUser(root.id, { username: "ada" }, seats10);
    }
    await deleteUser(ada.id, actor);
    expect((await refusal(setRole(root.id, "reviewer", actor))).message).toMatch(/only active administrator/);
    for (const u of (await listUsers()).filter((x) => x.username === "uma" || x.username === "vic")) await deleteUser(u.id, actor);
  });

  it("resets a password (which unlocks) and changes one's own, auditing without the passwords", async () => {
    const rita = (await listUsers()).find((u) => u.username === "rita")!;
    const next = "Brand-New-Secret-8";
    const t0 = new Date();
    for (let i = 0; i < 5; i++) await verifyCredentials("rita", "wrong-password", { ip: "10.0.0.5", policy, now: t0 });
    expect(await verifyCredentials("rita", GOOD, { ip: "10.0.0.5", policy, now: t0 })).toMatchObject({ reason: "locked" });
    expect((await refusal(resetPassword(rita.id, "rita-password-1", actor))).message).toMatch(/must not contain the username/);
    await resetPassword(rita.id, next, actor);
    expect((await verifyCredentials("rita", next, { ip: "10.0.0.5", policy, now: t0 })).ok).toBe(true);
    expect((await refusal(changeOwnPassword(rita.id, "not-my-password", GOOD))).message).toMatch(/current password is wrong/);
    expect((await refusal(changeOwnPassword(rita.id, next, "Short-1!"))).message).toMatch(/at least 12 characters/);
    await changeOwnPassword(rita.id, next, GOOD, "10.0.0.5");
    expect((await verifyCredentials("rita", GOOD, { ip: "10.0.0.5", policy })).ok).toBe(true);
    const rows = JSON.stringify(await (await db()).select().from(auditLog)) + JSON.stringify(await listUsers({ includeDeleted: true }));
    expect(rows).toMatch(/user\.reset-password/);
    expect(rows).toMatch(/user\.change-password/);
    for (const secret of [GOOD, next]) expect(rows).not.toContain(secret);
  });

  it("keeps one session secret for every node", async () => {
    const a = await authSecret();
    expect(a.length).toBeGreaterThanOrEqual(40);
    expect(await authSecret()).toBe(a);
    // another node reading (or racing to create) the secret gets the same one row
    const d = await db();
    expect(await Promise.all([loadAuthSecret(d), loadAuthSecret(d)])).toEqual([a, a]);
    expect((await d.select().from(settings)).filter((r) => r.key === "auth-secret")).toHaveLength(1);
    // each database has its own (not a per-process value)
    expect(secretsSeen).not.toContain(a);
    secretsSeen.push(a);
    process.env.AUTH_SECRET = "from-the-environment";
    expect(await authSecret()).toBe("from-the-environment");
    delete process.env.AUTH_SECRET;
  });

  it("creates tokens once, stores only their hash, checks kind, revokes at once, counts a monthly quota", async () => {
    const secrets: string[] = [];
    const logged = await captureOutput(async () => {
      const bearer = await createToken({ name: "ingest", kind: "bearer" }, actor);
      expect(bearer.token).toMatch(/^obs_b_[A-Za-z0-9_-]{43}$/);
      const access = await createToken({ name: "detector", kind: "access", monthlyQuota: 2 }, actor);
      const key = await createToken({ name: "plates", kind: "apikey" }, actor);
      secrets.push(bearer.token, access.token, key.token);
      expect(access.token).toMatch(/^obs_a_[A-Za-z0-9_-]{43}$/);
      expect(key.token).toMatch(/^obs_k_[A-Za-z0-9_-]{43}$/);
      const rows = JSON.stringify(await (await db()).select().from(apiTokens)) + JSON.stringify(await (await db()).select().from(auditLog));
      for (const t of [bearer, access, key]) expect(rows).not.toContain(t.token);

      const req = (headers: Record<string, string>) => new Request("http://x/api", { headers });
      expect(await authenticate(req({ authorization: `Bearer ${bearer.token}` }))).toMatchObject({ kind: "token", name: "ingest", role: "api", tokenKind: "bearer" });
      expect(await authenticate(req({ authorization: "Bearer bootstrap-token-for-tests" }))).toMatchObject({ kind: "bootstrap" });
      expect(await authenticateApiKey(req({ "x-api-key": key.token }))).toMatchObject({ name: "plates" });
      expect(await authenticateApiKey(req({ "X-API-KEY": "bootstrap-token-for-tests" }))).toMatchObject({ kind: "bootstrap" });
      // a bearer token is not an API key, an unknown token is refused
      expect((await refusal(authenticateApiKey(req({ "x-api-key": bearer.token })))).message).toMatch(/this is a bearer token/);
      expect((await refusal(authenticate(req({ authorization: "Bearer obs_b_nope" })))).message).toBe("invalid bearer token");
      // quota: 2 calls a month, the third refused with the reset date
      await authenticateAccessToken(req({ "x-access-token": access.token }));
      await authenticateAccessToken(req({ "x-access-token": access.token }));
      const over = await refusal(authenticateAccessToken(req({ "x-access-token": access.token })));
      expect(over.status).toBe("PERMISSION_DENIED");
      expect(over.message).toMatch(/monthly quota of 2 calls used up for this token; it resets on \d{4}-\d{2}-01/);
      // the bootstrap credential has no quota
      for (let i = 0; i < 3; i++) await authenticateAccessToken(req({ "x-access-token": "bootstrap-token-for-tests" }));
      // a new month starts from zero
      const next = new Date();
      next.setUTCMonth(next.getUTCMonth() + 1, 1);
      expect(await countCall({ id: access.info.id, monthlyQuota: 2 }, next)).toBe(1);

      const listed = await listTokens();
      expect(listed.find((t) => t.name === "detector")).toMatchObject({ callsThisMonth: 3, monthlyQuota: 2, kind: "access" });
      expect(listed.find((t) => t.name === "ingest")!.lastUsedAt).toBeInstanceOf(Date);

      await revokeToken(bearer.info.id, actor);
      expect((await refusal(authenticate(req({ authorization: `Bearer ${bearer.token}` })))).message).toMatch(/was revoked/);
      expect((await refusal(authenticateToken("bearer", bearer.token))).status).toBe("UNAUTHENTICATED");
      // an access token is not a bearer token; errors never echo a token
      const wrongKind = await refusal(authenticate(req({ authorization: `Bearer ${access.token}` })));
      expect(wrongKind.status).toBe("UNAUTHENTICATED");
      for (const e of [wrongKind, over]) for (const t of secrets) expect(e.message).not.toContain(t);
      expect((await listAudit({ limit: 10 })).map((a) => a.action)).toEqual(expect.arrayContaining(["token.create", "token.revoke"]));
    });
    for (const t of [...secrets, "bootstrap-token-for-tests"]) expect(logged).not.toContain(t);
    expect(logged).not.toMatch(/obs_[bak]_[A-Za-z0-9_-]{20}/);
  });
});

describe("session access", () => {
  it("admins and API clients see every session, reviewers the ones whose acl names them", () => {
    const s = { acl: ["Rita", "sam"] };
    expect(canSeeSession({ role: "admin", name: "root" }, { acl: [] })).toBe(true);
    expect(canSeeSession({ role: "api", name: "ingest" }, { acl: [] })).toBe(true);
    expect(canSeeSession({ role: "reviewer", name: "rita" }, s)).toBe(true);
    expect(canSeeSession({ role: "reviewer", name: "tom" }, s)).toBe(false);
  });
});

describe("headless bootstrap (OBSCURA_ADMIN_USER / OBSCURA_ADMIN_PASSWORD) on a fresh database", () => {
  useFreshDatabase("identity-bootstrap");

  const env = (user: string, password: string) => ({ OBSCURA_ADMIN_USER: user, OBSCURA_ADMIN_PASSWORD: password }) as unknown as NodeJS.ProcessEnv;
  const other = "Another-Strong-77?";

  it("refuses a weak password in the log, creates the admin once, never changes it", async () => {
    const weakLog = await captureOutput(() => bootstrapFromEnv(env("Boss", "hunter2hunter2")));
    expect(weakLog).toMatch(/OBSCURA_ADMIN_PASSWORD is too weak/);
    expect(weakLog).toMatch(/three of/);
    expect(weakLog).not.toContain("hunter2hunter2");
    expect(await setupState()).toEqual({ needsSetup: true });
    expect(await captureOutput(() => bootstrapFromEnv(env("boss", "")))).toMatch(/set both OBSCURA_ADMIN_USER and OBSCURA_ADMIN_PASSWORD/);

    const created = await captureOutput(() => bootstrapFromEnv(env("Boss", GOOD)));
    expect(created).toMatch(/first administrator created/);
    expect(created).not.toContain(GOOD);
    expect(await setupState()).toEqual({ needsSetup: false });
    expect((await listUsers()).map((u) => [u.username, u.role])).toEqual([["boss", "admin"]]);

    // every later start: nothing happens, the password stays the first one
    expect(await captureOutput(() => bootstrapFromEnv(env("boss", other)))).toBe("");
    await bootstrapFromEnv(env("someone", other));
    expect((await listUsers()).map((u) => u.username)).toEqual(["boss"]);
    expect((await verifyCredentials("boss", other, { ip: "10.1.1.1" })).ok).toBe(false);
    expect((await verifyCredentials("boss", GOOD, { ip: "10.1.1.1" })).ok).toBe(true);
    expect((await refusal(completeSetup({ username: "late", password: GOOD }))).status).toBe("FAILED_PRECONDITION");
    expect((await listAudit({ limit: 10 })).find((a) => a.action === "setup.complete")).toMatchObject({ actor: "boss", details: { how: "env" } });
  });
});
