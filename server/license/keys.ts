/**
 * Public keys licences are verified against: OBSCURA_LICENSE_PUBLIC_KEYS (comma- or
 * newline-separated; each a base64 raw 32-byte Ed25519 key, or a PEM "PUBLIC KEY" block), else
 * the vendor's built-in key. Only public keys live here; a private key never enters the server.
 */
import crypto from "node:crypto";
import { LicenseError } from "./document";

/** The vendor's licence-signing public key (raw Ed25519, base64). */
export const DEFAULT_PUBLIC_KEY = "VqEbAm79rByXDZVvop/JzI9hvNLmSCJo+SaYTaYInnE=";

const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex"); // DER header of an Ed25519 SubjectPublicKeyInfo

export function parsePublicKey(text: string): crypto.KeyObject {
  const t = text.trim();
  try {
    if (t.includes("BEGIN PUBLIC KEY")) {
      const key = crypto.createPublicKey(t);
      if (key.asymmetricKeyType !== "ed25519") throw new LicenseError(`a licence key must be Ed25519, not ${key.asymmetricKeyType}`);
      return key;
    }
    const raw = Buffer.from(t, "base64");
    if (raw.length !== 32 || raw.toString("base64").replace(/=+$/, "") !== t.replace(/=+$/, "")) {
      throw new LicenseError(`a licence public key must be 32 bytes in base64 or a PEM block; got ${JSON.stringify(t.slice(0, 12))}…`);
    }
    return crypto.createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" });
  } catch (e) {
    if (e instanceof LicenseError) throw e;
    throw new LicenseError(`could not read a licence public key: ${(e as Error).message}`);
  }
}

/** Splits the env value into keys: PEM blocks whole, other entries at commas or line breaks. */
export function parsePublicKeys(value: string): crypto.KeyObject[] {
  const pems = value.match(/-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----/g) ?? [];
  const rest = value.replace(/-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----/g, "");
  return [...pems, ...rest.split(/[,\s]+/).filter(Boolean)].map(parsePublicKey);
}

export function trustedKeys(env: NodeJS.ProcessEnv = process.env): crypto.KeyObject[] {
  const v = env.OBSCURA_LICENSE_PUBLIC_KEYS?.trim();
  return v ? parsePublicKeys(v) : [parsePublicKey(DEFAULT_PUBLIC_KEY)];
}
