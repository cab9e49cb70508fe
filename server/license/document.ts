/**
 * The licence document (docs/licensing.md): what it grants, signed with Ed25519.
 *
 *   {
 *     "license": { "id", "licensee", "seats", "features", "issuedAt", "expiresAt" },
 *     "keyId": "<16 hex: SHA-256 of the raw public key>",
 *     "signature": "<base64 Ed25519 signature of the canonical JSON of `license`>"
 *   }
 *
 * Canonical JSON: keys sorted, no whitespace, so a document re-indented by an editor or a mail
 * client still verifies. Pure code: node:crypto only, no I/O.
 */
import crypto from "node:crypto";

export const FEATURES = ["redaction", "vehicle-api", "detection-api", "analytics"] as const;
export type LicenseFeature = (typeof FEATURES)[number];

export interface License {
  id: string;
  licensee: string;
  /** Most active users at once. */
  seats: number;
  /** Features granted, or ["*"] for all. */
  features: string[];
  /** ISO dates (YYYY-MM-DD or full timestamps). */
  issuedAt: string;
  expiresAt: string;
}

export interface SignedLicense {
  license: License;
  keyId: string;
  signature: string;
}

/** A problem with a licence document, said so a person can act on it. */
export class LicenseError extends Error {}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The short id of a public key: 16 hex characters of SHA-256 over its 32 raw bytes. */
export function keyIdOf(key: crypto.KeyObject): string {
  return crypto.createHash("sha256").update(rawPublicKey(key)).digest("hex").slice(0, 16);
}

export function rawPublicKey(key: crypto.KeyObject): Buffer {
  return key.export({ format: "der", type: "spki" }).subarray(-32);
}

const isDate = (s: unknown) => typeof s === "string" && /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(s) && !Number.isNaN(Date.parse(s));

/** Checks the fields of a licence, naming the first one that is wrong. */
export function validateLicense(l: unknown): License {
  if (!l || typeof l !== "object") throw new LicenseError("the document has no `license` object");
  const x = l as Record<string, unknown>;
  const need = (field: string, ok: boolean, what: string) => {
    if (x[field] === undefined) throw new LicenseError(`the licence has no \`${field}\``);
    if (!ok) throw new LicenseError(`the licence's \`${field}\` must be ${what}, not ${JSON.stringify(x[field])}`);
  };
  need("id", typeof x.id === "string" && x.id.length > 0 && x.id.length <= 100, "a non-empty string");
  need("licensee", typeof x.licensee === "string" && x.licensee.trim().length > 0 && x.licensee.length <= 200, "a non-empty name");
  need("seats", Number.isInteger(x.seats) && (x.seats as number) >= 1 && (x.seats as number) <= 100_000, "a whole number from 1 to 100000");
  need(
    "features",
    Array.isArray(x.features) && x.features.length > 0 && x.features.every((f) => f === "*" || (FEATURES as readonly unknown[]).includes(f)),
    `a list of ${FEATURES.join(", ")} (or "*")`,
  );
  need("issuedAt", isDate(x.issuedAt), "a date (YYYY-MM-DD)");
  need("expiresAt", isDate(x.expiresAt), "a date (YYYY-MM-DD)");
  if (Date.parse(x.expiresAt as string) <= Date.parse(x.issuedAt as string)) throw new LicenseError("the licence expires before it was issued");
  return { id: x.id as string, licensee: (x.licensee as string).trim(), seats: x.seats as number, features: x.features as string[], issuedAt: x.issuedAt as string, expiresAt: x.expiresAt as string };
}

export function signLicense(license: License, privateKey: crypto.KeyObject): SignedLicense {
  const valid = validateLicense(license);
  const publicKey = crypto.createPublicKey(privateKey);
  const signature = crypto.sign(null, Buffer.from(canonicalJson(valid)), privateKey).toString("base64");
  return { license: valid, keyId: keyIdOf(publicKey), signature };
}

export function formatLicense(doc: SignedLicense): string {
  return JSON.stringify(doc, null, 2) + "\n";
}

/** Parses a document as pasted or uploaded (surrounding whitespace and a BOM tolerated). */
export function parseLicense(text: string): SignedLicense {
  const trimmed = text.replace(/^\uFEFF/, "").trim();
  if (!trimmed) throw new LicenseError("the licence is empty");
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    throw new LicenseError("this is not a licence: it is not the JSON document Obscura licences are (it should start with `{\"license\"`)");
  }
  const d = parsed as Record<string, unknown>;
  if (!d || typeof d !== "object" || !("license" in d)) throw new LicenseError("this is not a licence: the document has no `license` object");
  const license = validateLicense(d.license);
  if (typeof d.keyId !== "string" || !/^[0-9a-f]{16}$/.test(d.keyId)) throw new LicenseError("the licence has no valid `keyId` (16 hex characters)");
  if (typeof d.signature !== "string" || !d.signature) throw new LicenseError("the licence has no `signature`");
  return { license, keyId: d.keyId, signature: d.signature };
}

/**
 * Verifies a parsed document against trusted public keys: the key named by `keyId` must be one of
 * them and the signature must match the canonical licence. Throws LicenseError saying which.
 */
export function verifyLicense(doc: SignedLicense, trusted: readonly crypto.KeyObject[]): License {
  const key = trusted.find((k) => keyIdOf(k) === doc.keyId);
  if (!key) throw new LicenseError(`the licence is signed with a key this server does not trust (keyId ${doc.keyId}); check OBSCURA_LICENSE_PUBLIC_KEYS`);
  const ok = crypto.verify(null, Buffer.from(canonicalJson(doc.license)), key, Buffer.from(doc.signature, "base64"));
  if (!ok) throw new LicenseError("the licence's signature does not match its contents: it was changed after it was signed");
  return doc.license;
}

/** Whole days from `now` to the licence's expiry (negative once expired). */
/** When the licence ends (ms): a bare date runs to the end of that day, UTC. */
function endsAt(license: License): number {
  return Date.parse(license.expiresAt.length === 10 ? `${license.expiresAt}T23:59:59.999Z` : license.expiresAt);
}

export function daysLeft(license: License, now = new Date()): number {
  return Math.floor((endsAt(license) - now.getTime()) / 86_400_000);
}

export function isExpired(license: License, now = new Date()): boolean {
  return endsAt(license) < now.getTime();
}
