/**
 * Licensing (docs/licensing.md). Offers:
 * - `licenseStatus()`: the licence in force (valid, expired) or the evaluation tier, cached 5 s;
 * - `installLicense(document, { actor })`: verify, then make it the one in force (history kept);
 *   `installLicenseFromEnv()`: the same for OBSCURA_LICENSE_FILE at start, idempotent;
 * - enforcement: `assertCanProcess()` (403 once expired: reading and editing still work),
 *   `assertFeature(name)`, `seatLimit()`;
 * - document.ts (format, sign, verify; pure) and keys.ts (trusted public keys).
 */
import crypto from "node:crypto";
import fs from "node:fs/promises";
import { desc, eq } from "drizzle-orm";
import { ObscuraError } from "@/lib/errors";
import { db as database, type Db } from "../db/client";
import { auditLog, licenses } from "../db/schema";
import { log } from "../log";
import { daysLeft, isExpired, LicenseError, parseLicense, verifyLicense, type License } from "./document";
import { trustedKeys } from "./keys";

export { FEATURES, LicenseError, canonicalJson, formatLicense, keyIdOf, parseLicense, rawPublicKey, signLicense, validateLicense, verifyLicense, daysLeft, type License, type SignedLicense } from "./document";
export { DEFAULT_PUBLIC_KEY, parsePublicKey, parsePublicKeys, trustedKeys } from "./keys";

/** Active users allowed without a licence. */
export const EVALUATION_SEATS = 3;
export const EVALUATION_NOTICE = `Obscura is running without a licence (evaluation): every feature works, for up to ${EVALUATION_SEATS} active users.`;

export interface LicenseStatus {
  state: "valid" | "expired" | "evaluation";
  id: string | null;
  licensee: string | null;
  seats: number;
  features: string[];
  issuedAt: string | null;
  expiresAt: string | null;
  /** Whole days to expiry (negative once expired); null in evaluation. */
  daysLeft: number | null;
  /** Why the state is what it is, when a person should know (expired, an installed licence no longer verifies). */
  reason?: string;
  /** Shown in the UI in evaluation mode. */
  notice?: string;
}

const CACHE_MS = 5000;
// One cache per process, not per module instance: the web app bundles route handlers and server
// actions separately, and a licence installed through one must be seen by the others at once.
const KEY = Symbol.for("obscura.license.cache");
type Cache = { at: number; status: LicenseStatus } | null;
const holder = globalThis as { [KEY]?: Cache };
const getCache = (): Cache => holder[KEY] ?? null;
const setCache = (c: Cache) => {
  holder[KEY] = c;
};

export function clearLicenseCache(): void {
  setCache(null);
}

function evaluation(reason?: string): LicenseStatus {
  return { state: "evaluation", id: null, licensee: null, seats: EVALUATION_SEATS, features: ["*"], issuedAt: null, expiresAt: null, daysLeft: null, notice: EVALUATION_NOTICE, ...(reason ? { reason } : {}) };
}

export function statusOf(license: License, now = new Date()): LicenseStatus {
  const expired = isExpired(license, now);
  const left = daysLeft(license, now);
  return {
    state: expired ? "expired" : "valid",
    id: license.id,
    licensee: license.licensee,
    seats: license.seats,
    features: license.features,
    issuedAt: license.issuedAt,
    expiresAt: license.expiresAt,
    daysLeft: left,
    ...(expired
      ? { reason: `The licence of ${license.licensee} expired on ${license.expiresAt.slice(0, 10)} (${-left} day${-left === 1 ? "" : "s"} ago): reading and editing still work; new processing needs a renewed licence (see /admin/license).` }
      : {}),
  };
}

export async function licenseStatus(opts: { db?: Db; now?: Date; fresh?: boolean } = {}): Promise<LicenseStatus> {
  const cache = getCache();
  if (!opts.fresh && !opts.now && cache && Date.now() - cache.at < CACHE_MS) return cache.status;
  const d = opts.db ?? (await database());
  const [row] = await d.select().from(licenses).where(eq(licenses.active, true)).orderBy(desc(licenses.installedAt)).limit(1);
  let status: LicenseStatus;
  if (!row) status = evaluation();
  else {
    try {
      status = statusOf(verifyLicense(parseLicense(row.document), trustedKeys()), opts.now);
    } catch (e) {
      const why = e instanceof LicenseError ? e.message : String(e);
      log.warn("the installed licence does not verify; running as evaluation", { licenseId: row.id, reason: why });
      status = evaluation(`The installed licence ${row.id} no longer verifies (${why}); running as evaluation.`);
    }
  }
  if (!opts.now) setCache({ at: Date.now(), status });
  return status;
}

/** Verifies `document` and makes it the licence in force; the previous ones stay as history. */
export async function installLicense(document: string, opts: { actor?: string; ip?: string; db?: Db } = {}): Promise<LicenseStatus> {
  let license: License;
  try {
    license = verifyLicense(parseLicense(document), trustedKeys());
  } catch (e) {
    if (e instanceof LicenseError) throw new ObscuraError("INVALID_ARGUMENT", `licence refused: ${e.message}`, { details: [{ field: "document", problem: e.message }] });
    throw e;
  }
  const d = opts.db ?? (await database());
  await d.transaction(async (tx) => {
    await tx.update(licenses).set({ active: false }).where(eq(licenses.active, true));
    await tx
      .insert(licenses)
      .values({ id: license.id, document: document.trim(), installedBy: opts.actor ?? null, active: true })
      .onConflictDoUpdate({ target: licenses.id, set: { document: document.trim(), installedBy: opts.actor ?? null, installedAt: new Date(), active: true } });
    await tx.insert(auditLog).values({
      id: crypto.randomUUID(),
      actor: opts.actor ?? "system",
      action: "license.install",
      target: license.id,
      ip: opts.ip ?? null,
      details: { licensee: license.licensee, seats: license.seats, features: license.features, expiresAt: license.expiresAt },
    });
  });
  clearLicenseCache();
  const status = statusOf(license);
  log.info("licence installed", { licenseId: license.id, licensee: license.licensee, seats: license.seats, expiresAt: license.expiresAt, state: status.state });
  return status;
}

/** OBSCURA_LICENSE_FILE at start: installs that licence unless it is already the one in force. Never throws. */
export async function installLicenseFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const file = env.OBSCURA_LICENSE_FILE?.trim();
  if (!file) return;
  try {
    const text = (await fs.readFile(file, "utf8")).trim();
    const d = await database();
    const [row] = await d.select().from(licenses).where(eq(licenses.active, true)).orderBy(desc(licenses.installedAt)).limit(1);
    if (row?.document === text) return;
    await installLicense(text, { actor: "system" });
  } catch (e) {
    log.error("OBSCURA_LICENSE_FILE was not installed", { file, reason: (e as Error).message });
  }
}

/** New processing needs a licence in force (or the evaluation tier). */
export async function assertCanProcess(): Promise<void> {
  const s = await licenseStatus();
  if (s.state === "expired") throw new ObscuraError("PERMISSION_DENIED", s.reason ?? "the licence has expired; new processing needs a renewed licence");
}

export async function assertFeature(feature: string): Promise<void> {
  const s = await licenseStatus();
  if (s.features.includes("*") || s.features.includes(feature)) return;
  throw new ObscuraError("PERMISSION_DENIED", `the licence of ${s.licensee} does not include ${feature} (it grants ${s.features.join(", ")}); see /admin/license`);
}

export async function seatLimit(): Promise<number> {
  return (await licenseStatus()).seats;
}
