/**
 * Licences (server/license, scripts/license.ts): Ed25519 documents signed and verified, tampering,
 * unknown keys, malformed and expired licences refused or flagged with a clear reason, the
 * evaluation tier, installing into a real database, and the CLI end to end.
 */
import { execFileSync, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ObscuraError } from "@/lib/errors";
import {
  assertCanProcess,
  assertFeature,
  EVALUATION_SEATS,
  formatLicense,
  installLicense,
  keyIdOf,
  licenseStatus,
  parseLicense,
  parsePublicKeys,
  rawPublicKey,
  seatLimit,
  signLicense,
  statusOf,
  verifyLicense,
  type License,
} from "@/server/license";
import { ROOT, tempDir } from "./helpers/server";
import { useFreshDatabase } from "./helpers/database";

const pair = () => crypto.generateKeyPairSync("ed25519");
const base: License = { id: "lic-1", licensee: "City of Testing", seats: 5, features: ["redaction", "detection-api"], issuedAt: "2026-01-01", expiresAt: "2099-12-31" };

function refused(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected a refusal");
}

describe("licence documents", () => {
  const vendor = pair();
  const other = pair();

  it("sign and verify; whitespace and key order do not matter", () => {
    const doc = signLicense(base, vendor.privateKey);
    expect(doc.keyId).toBe(keyIdOf(vendor.publicKey));
    const text = formatLicense(doc);
    expect(verifyLicense(parseLicense(`\n  ${text}  \n`), [vendor.publicKey])).toEqual(base);
    const reordered = JSON.stringify({ signature: doc.signature, keyId: doc.keyId, license: { ...doc.license, seats: 5, id: "lic-1" } });
    expect(verifyLicense(parseLicense(reordered), [other.publicKey, vendor.publicKey]).licensee).toBe("City of Testing");
  });

  it("refuse a tampered licence, an unknown key, and malformed ones naming the field", () => {
    const doc = signLicense(base, vendor.privateKey);
    const tampered = JSON.stringify({ ...doc, license: { ...doc.license, seats: 500 } });
    expect(refused(() => verifyLicense(parseLicense(tampered), [vendor.publicKey]))).toMatch(/signature does not match.*changed after it was signed/);
    expect(refused(() => verifyLicense(parseLicense(formatLicense(doc)), [other.publicKey]))).toContain(`keyId ${doc.keyId}`);
    expect(refused(() => parseLicense("hello"))).toMatch(/not a licence/);
    expect(refused(() => parseLicense(JSON.stringify({ ...doc, license: { ...doc.license, seats: 0 } })))).toMatch(/`seats` must be a whole number/);
    const { expiresAt: _, ...noExpiry } = doc.license;
    expect(refused(() => parseLicense(JSON.stringify({ ...doc, license: noExpiry })))).toMatch(/has no `expiresAt`/);
    expect(refused(() => parseLicense(JSON.stringify({ ...doc, license: { ...doc.license, features: ["teleport"] } })))).toMatch(/`features` must be a list of/);
  });

  it("an expired licence verifies but is flagged, with the days since", () => {
    const now = new Date("2027-01-10T12:00:00Z");
    const s = statusOf({ ...base, expiresAt: "2027-01-01" }, now);
    expect(s).toMatchObject({ state: "expired", daysLeft: -9, seats: 5 });
    expect(s.reason).toMatch(/expired on 2027-01-01 \(9 days ago\): reading and editing still work; new processing needs a renewed licence/);
    expect(statusOf(base, now)).toMatchObject({ state: "valid" });
  });

  it("reads public keys as base64 or PEM, separated by commas or lines", () => {
    const b64 = rawPublicKey(vendor.publicKey).toString("base64");
    const pem = other.publicKey.export({ format: "pem", type: "spki" }).toString();
    const keys = parsePublicKeys(`${b64},\n${pem}`);
    expect(new Set(keys.map(keyIdOf))).toEqual(new Set([keyIdOf(vendor.publicKey), keyIdOf(other.publicKey)]));
    expect(refused(() => parsePublicKeys("not-a-key"))).toMatch(/32 bytes in base64 or a PEM block/);
  });
});

describe("licences installed in the database", () => {
  const vendor = pair();
  useFreshDatabase("license", { env: { OBSCURA_LICENSE_PUBLIC_KEYS: rawPublicKey(vendor.publicKey).toString("base64") } });

  it("runs as the evaluation tier without one", async () => {
    const s = await licenseStatus({ fresh: true });
    expect(s).toMatchObject({ state: "evaluation", seats: EVALUATION_SEATS, features: ["*"] });
    expect(s.notice).toMatch(/without a licence/);
    await assertCanProcess();
    await assertFeature("analytics");
  });

  it("installs a licence, refuses a bad one with the reason, and lets the newest apply", async () => {
    const first = formatLicense(signLicense(base, vendor.privateKey));
    expect(await installLicense(first, { actor: "root" })).toMatchObject({ state: "valid", licensee: "City of Testing", seats: 5 });
    expect(await seatLimit()).toBe(5);
    await expect(assertFeature("analytics")).rejects.toThrow(/does not include analytics/);
    const forged = formatLicense(signLicense({ ...base, id: "lic-2", seats: 50 }, pair().privateKey));
    const err = await installLicense(forged).catch((e) => e);
    expect(err).toBeInstanceOf(ObscuraError);
    expect(err.message).toMatch(/licence refused: the licence is signed with a key this server does not trust/);
    expect((await licenseStatus()).seats).toBe(5);
    await installLicense(formatLicense(signLicense({ ...base, id: "lic-3", seats: 9, features: ["*"] }, vendor.privateKey)));
    expect(await licenseStatus()).toMatchObject({ id: "lic-3", seats: 9 });
  });

  it("an expired licence refuses new processing with 403 and says why", async () => {
    await installLicense(formatLicense(signLicense({ ...base, id: "lic-old", issuedAt: "2024-01-01", expiresAt: "2025-01-01" }, vendor.privateKey)));
    const err = await assertCanProcess().catch((e) => e);
    expect(err).toBeInstanceOf(ObscuraError);
    expect(err.httpStatus).toBe(403);
    expect(err.message).toMatch(/expired on 2025-01-01/);
  });
});

describe("npm run license", () => {
  const run = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", "scripts/license.ts", ...args], { cwd: ROOT, encoding: "utf8", env: { ...process.env, OBSCURA_LICENSE_PUBLIC_KEYS: "" } });
  it("creates keys, issues a licence, verifies it, and refuses with exit codes", () => {
    const dir = tempDir("license-cli");
    const keygen = run("keygen", "--out", path.join(dir, "keys"));
    expect(keygen.status).toBe(0);
    const b64 = /OBSCURA_LICENSE_PUBLIC_KEYS=(\S+)/.exec(keygen.stdout)![1]!;
    expect(Buffer.from(b64, "base64")).toHaveLength(32);
    expect(fs.statSync(path.join(dir, "keys", "license-private.pem")).mode & 0o777).toBe(0o600);
    expect(keygen.stdout).not.toContain("PRIVATE KEY");
    const lic = path.join(dir, "a.lic");
    const issue = run("issue", "--key", path.join(dir, "keys", "license-private.pem"), "--licensee", "ACME", "--seats", "4", "--features", "redaction,analytics", "--days", "30", "--out", lic);
    expect(issue.status).toBe(0);
    const ok = run("verify", lic, "--public-key", b64);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/^VALID: ACME, 4 seats, features redaction, analytics/);
    const wrongKey = run("verify", lic); // the built-in vendor key did not sign it
    expect(wrongKey.status).toBe(1);
    expect(wrongKey.stderr).toMatch(/REFUSED: .*does not trust/);
    expect(run("issue", "--key", "x", "--licensee", "A", "--seats", "zero", "--days", "3").status).toBe(2);
    expect(run("frobnicate").status).toBe(2);
    // the file is the JSON document the server reads
    expect(parseLicense(fs.readFileSync(lic, "utf8")).license.seats).toBe(4);
    expect(execFileSync("cat", [lic]).toString()).toContain('"signature"');
  });
});
