/**
 * First run and shared secrets.
 * - `setupState()`: setup is needed until an administrator exists.
 * - `completeSetup()`: the web form's first admin, exactly once: the `settings` row "setup" is
 *   inserted in the same transaction as the user, so of two concurrent calls one commits and the
 *   other finds the row taken.
 * - `bootstrapFromEnv()`: OBSCURA_ADMIN_USER + OBSCURA_ADMIN_PASSWORD do the same for headless
 *   deployments at start; idempotent, never changes an existing user, never logs the password.
 * - `authSecret()`: AUTH_SECRET, else a random secret created once in `settings` and shared by
 *   every web node (sessions signed by one are accepted by all).
 */
import crypto from "node:crypto";
import { eq } from "drizzle-orm";
import { ObscuraError } from "@/lib/errors";
import { db as database, type Db } from "../db/client";
import { settings, users } from "../db/schema";
import { log } from "../log";
import { audit } from "./audit";
import { assertPassword, hashPassword, normaliseUsername, passwordProblem } from "./passwords";
import { adminExists, publicUser, type PublicUser } from "./users";

export async function setupState(): Promise<{ needsSetup: boolean }> {
  return { needsSetup: !(await adminExists()) };
}

async function createFirstAdmin(usernameRaw: string, password: string, how: string, ip?: string): Promise<PublicUser | null> {
  const username = normaliseUsername(usernameRaw);
  assertPassword(password, username);
  const passwordHash = await hashPassword(password);
  const d = await database();
  if (await adminExists(d)) return null;
  return d.transaction(async (tx) => {
    const claimed = await tx
      .insert(settings)
      .values({ key: "setup", value: { completedAt: new Date().toISOString(), by: username, how } })
      .onConflictDoNothing()
      .returning();
    if (!claimed.length) return null;
    const [row] = await tx.insert(users).values({ id: crypto.randomUUID(), username, passwordHash, role: "admin", passwordChangedAt: new Date() }).returning();
    await audit({ actor: username, action: "setup.complete", target: username, ip, details: { how } }, tx);
    return publicUser(row!);
  });
}

/** The first admin from the setup form; refused once setup is done. */
export async function completeSetup(input: { username: string; password: string }, opts: { ip?: string } = {}): Promise<PublicUser> {
  const user = await createFirstAdmin(input.username, input.password, "web", opts.ip);
  if (!user) throw new ObscuraError("FAILED_PRECONDITION", "setup is already done: sign in as an administrator");
  log.info("first administrator created", { username: user.username, how: "web" });
  return user;
}

/** Headless setup at start; logs (never throws) when the variables are incomplete or the password is weak. */
export async function bootstrapFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const username = env.OBSCURA_ADMIN_USER?.trim();
  const password = env.OBSCURA_ADMIN_PASSWORD ?? "";
  if (!username && !password) return;
  if (!username || !password) {
    log.error("set both OBSCURA_ADMIN_USER and OBSCURA_ADMIN_PASSWORD to create the first administrator; nothing was created");
    return;
  }
  try {
    if (await adminExists()) return;
    const problem = passwordProblem(password, username.toLowerCase());
    if (problem) {
      log.error("OBSCURA_ADMIN_PASSWORD is too weak; no administrator was created", { problem });
      return;
    }
    const user = await createFirstAdmin(username, password, "env");
    if (user) log.info("first administrator created", { username: user.username, how: "OBSCURA_ADMIN_USER" });
  } catch (e) {
    log.error("could not create the administrator from OBSCURA_ADMIN_USER", { reason: (e as Error).message });
  }
}

/**
 * Reads the shared secret, creating it first when missing: insert-if-absent then read, so nodes
 * starting at the same moment all end up with the one row that won.
 */
export async function loadAuthSecret(d: Db): Promise<string> {
  await d.insert(settings).values({ key: "auth-secret", value: crypto.randomBytes(32).toString("base64url") }).onConflictDoNothing();
  const [row] = await d.select().from(settings).where(eq(settings.key, "auth-secret")).limit(1);
  return String(row!.value);
}

/** Per database runtime (a test that switches databases gets that database's secret). */
const secrets = new WeakMap<Db, Promise<string>>();

/** The key that signs session cookies (never logged). */
export async function authSecret(): Promise<string> {
  if (process.env.AUTH_SECRET) return process.env.AUTH_SECRET;
  const d = await database();
  let p = secrets.get(d);
  if (!p) {
    p = loadAuthSecret(d);
    secrets.set(d, p);
    p.catch(() => secrets.delete(d));
  }
  return p;
}
