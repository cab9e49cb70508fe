/**
 * People and credentials (server/identity, server/auth/bearer.ts) against a real migrated
 * database, on both the embedded PGlite and the PostgreSQL server: password rules, first-run setup
 * (once, even when two race), users and seats, the last admin, sign-in with lockout and per-address
 * throttling, API tokens (hashed, by kind, revocation, monthly quota), and the bootstrap token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObscuraError } from "@/lib/errors";
import { resetConfig } from "@/server/config";
import { closeRuntime, db } from "@/server/db/client";
import { apiTokens, auditLog, users } from "@/server/db/schema";
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
  passwordProblem,
  revokeToken,
  setupState,
  verifyCredentials,
  type SignInPolicy,
} from "@/server/identity";
import { authenticate, authenticateAccessToken, authenticateApiKey, resetAuthCache } from "@/server/auth/bearer";
import { canSeeSession } from "@/server/identity/access";
import { clearLicenseCache } from "@/server/license";
import { tempDir, tempPostgres } from "./helpers/server";

const GOOD = "Correct-Horse-42!";
const actor = { username: "root", ip: "10.0.0.1" };

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
    expect(passwordProblem("Alice-Secret-99", "alice")).toMatch(/must not contain the username/);
    expect(passwordProblem("password1234")).toMatch(/most common/);
    expect(passwordProblem("aaaaaaaaaaaaaaaa")).toMatch(/repeats too few/);
    expect(passwordProblem("lowercaseonly1")).toMatch(/three of/);
    expect(passwordProblem("a long passphrase of words")).toBeNull(); // 20+ characters
    expect(passwordProblem(GOOD)).toBeNull();
  });
});

const databases = [
  { name: "embedded PGlite", pg: false },
  { name: "PostgreSQL server", pg: true },
];

describe.each(databases)("identity on $name", ({ pg }) => {
  const saved = { ...process.env };
  let drop: (() => Promise<void>) | null = null;
  const policy: SignInPolicy = { maxFailures: 3, lockMs: 60_000, maxAddressFailures: 6, windowMs: 600_000 };

  beforeAll(async () => {
    await closeRuntime();
    process.env.OBSCURA_DATA_DIR = tempDir("identity");
    process.env.OBSCURA_API_TOKEN = "bootstrap-token-for-tests";
    delete process.env.AUTH_SECRET;
    delete process.env.OBSCURA_LICENSE_PUBLIC_KEYS;
    if (pg) {
      const t = await tempPostgres();
      process.env.DATABASE_URL = t.url;
      drop = t.drop;
    } else delete process.env.DATABASE_URL;
    resetConfig();
    resetAuthCache();
    clearLicenseCache();
  });
  afterAll(async () => {
    await closeRuntime();
    await drop?.();
    process.env = saved;
    resetConfig();
    resetAuthCache();
  });

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
    for (let i = 0; i < 2; i++) expect(await verifyCredentials("rita", "wrong-password", { ip: "10.0.0.2", policy, now: t0 })).toEqual({ ok: false, reason: "invalid" });
    const third = await verifyCredentials("rita", "wrong-password", { ip: "10.0.0.2", policy, now: t0 });
    expect(third).toMatchObject({ ok: false, reason: "locked" });
    // locked: even the right password is refused until the lock ends
    expect(await verifyCredentials("rita", GOOD, { ip: "10.0.0.3", policy, now: new Date(t0.getTime() + 30_000) })).toMatchObject({ ok: false, reason: "locked" });
    const later = await verifyCredentials("rita", GOOD, { ip: "10.0.0.3", policy, now: new Date(t0.getTime() + 61_000) });
    expect(later.ok).toBe(true);
    const audit = await listAudit({ limit: 20 });
    expect(audit.find((a) => a.action === "user.locked")?.target).toBe("rita");
    expect(audit.find((a) => a.action === "sign-in.failure")?.details).toMatchObject({ reason: expect.any(String) });
  });

  it("throttles an address after too many failures, whatever the usernames", async () => {
    const ip = "10.9.9.9";
    for (let i = 0; i < 7; i++) await verifyCredentials(`nobody${i}`, "whatever-password", { ip, policy });
    expect(await verifyCredentials("rita", GOOD, { ip, policy })).toMatchObject({ ok: false, reason: "throttled" });
    expect((await verifyCredentials("rita", GOOD, { ip: "10.9.9.10", policy })).ok).toBe(true);
  });

  it("tells the client only 'invalid' for a disabled user, and audits why", async () => {
    const rita = (await listUsers()).find((u) => u.username === "rita")!;
    await disableUser(rita.id, actor);
    expect(await verifyCredentials("rita", GOOD, { ip: "10.0.0.4", policy })).toEqual({ ok: false, reason: "invalid" });
    const last = (await listAudit({ limit: 5 })).find((a) => a.action === "sign-in.failure")!;
    expect(last.details).toMatchObject({ reason: "user disabled" });
    await enableUser(rita.id, actor);
  });

  it("keeps one session secret for every node", async () => {
    const a = await authSecret();
    expect(a.length).toBeGreaterThanOrEqual(40);
    expect(await authSecret()).toBe(a);
  });

  it("creates tokens once, stores only their hash, checks kind, revokes at once, counts a monthly quota", async () => {
    const logged: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    const ewrite = process.stderr.write.bind(process.stderr);
    process.stdout.write = ((c: string | Uint8Array) => (logged.push(String(c)), true)) as typeof process.stdout.write;
    process.stderr.write = ((c: string | Uint8Array) => (logged.push(String(c)), true)) as typeof process.stderr.write;
    try {
      const bearer = await createToken({ name: "ingest", kind: "bearer" }, actor);
      expect(bearer.token).toMatch(/^obs_b_[A-Za-z0-9_-]{43}$/);
      const access = await createToken({ name: "detector", kind: "access", monthlyQuota: 2 }, actor);
      const key = await createToken({ name: "plates", kind: "apikey" }, actor);
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
    } finally {
      process.stdout.write = write;
      process.stderr.write = ewrite;
    }
    expect(logged.join("")).not.toMatch(/obs_[bak]_[A-Za-z0-9_-]{20}/);
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
