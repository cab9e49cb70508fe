/**
 * Password rules and hashing. Hashes are argon2id (@node-rs/argon2) with OWASP's recommended
 * minimum: 19 MiB of memory, 2 passes, 1 lane (about 30-60 ms here), as PHC strings that carry
 * their own parameters, so raising them later keeps old hashes verifiable.
 */
import { hash, verify } from "@node-rs/argon2";
import { ObscuraError } from "@/lib/errors";

const ARGON2 = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export const USERNAME_RULE = "a username is 3-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit";

/** A handful of the most common passwords of 12+ characters (leaked-password lists), lower-case. */
const COMMON = new Set([
  "password1234", "password12345", "password123456", "123456789012", "1234567890123", "qwertyuiop12", "qwertyuiop123",
  "iloveyou1234", "administrator", "administrator1", "passw0rd1234", "welcome12345", "letmein12345", "changeme1234",
  "abcdefghijkl", "abc123456789", "111111111111", "000000000000", "qwerty123456", "1q2w3e4r5t6y", "football1234",
  "baseball1234", "superman1234", "trustno1trustno1", "obscura12345", "obscuraadmin",
]);

/** Lower-cases and checks a username; throws INVALID_ARGUMENT naming the rule. */
export function normaliseUsername(raw: string): string {
  const u = String(raw ?? "").trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9._-]{2,63}$/.test(u)) {
    throw new ObscuraError("INVALID_ARGUMENT", `username ${JSON.stringify(raw)} is not allowed: ${USERNAME_RULE}`, { details: [{ field: "username", problem: USERNAME_RULE }] });
  }
  return u;
}

/** What is wrong with a password, or null. */
export function passwordProblem(password: string, username = ""): string | null {
  if (typeof password !== "string" || password.length < 12) return "The password must have at least 12 characters.";
  if (password.length > 256) return "The password must have at most 256 characters.";
  const lower = password.toLowerCase();
  if (username && lower.includes(username.toLowerCase())) return "The password must not contain the username.";
  if (COMMON.has(lower)) return "This password is one of the most common ones: choose another.";
  if (new Set(password).size < 5) return "The password repeats too few characters: choose a less predictable one.";
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((re) => re.test(password)).length;
  if (password.length < 20 && classes < 3) return "Use three of: lower case, upper case, digits, symbols (or a passphrase of 20 characters or more).";
  return null;
}

export function assertPassword(password: string, username = ""): void {
  const problem = passwordProblem(password, username);
  if (problem) throw new ObscuraError("INVALID_ARGUMENT", problem, { details: [{ field: "password", problem }] });
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

export async function verifyPassword(phc: string, password: string): Promise<boolean> {
  try {
    return await verify(phc, password);
  } catch {
    return false;
  }
}

/** Verified when a username does not exist, so the answer takes as long as for a real one. */
let dummy: Promise<string> | null = null;
export async function dummyVerify(password: string): Promise<void> {
  dummy ??= hashPassword("obscura-dummy-password-" + Math.random());
  await verifyPassword(await dummy, password);
}
