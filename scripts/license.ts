/**
 * `npm run license -- <command>`: keys and licences for operators and tests (docs/licensing.md).
 *
 *   keygen --out DIR                      license-private.pem (0600) + license-public.pem; prints
 *                                         the public key for OBSCURA_LICENSE_PUBLIC_KEYS
 *   issue --key PRIVATE.pem --licensee NAME --seats N [--features a,b|*] (--days N | --expires YYYY-MM-DD)
 *         [--id ID] [--issued YYYY-MM-DD] [--out FILE]
 *   verify FILE [--public-key KEY]        prints the licence and its state; exit 1 when refused
 *
 * Exit codes: 0 done, 1 refused/failed, 2 usage error. The private key is never printed.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { FEATURES, formatLicense, isExpired, keyIdOf, LicenseError, parseLicense, rawPublicKey, signLicense, verifyLicense } from "../server/license/document";
import { parsePublicKeys, trustedKeys } from "../server/license/keys";

class UsageError extends Error {}

const HELP = `Usage: npm run license -- <command> [options]

Commands:
  keygen --out DIR         create a licence-signing key pair (license-private.pem, license-public.pem)
  issue  --key FILE --licensee NAME --seats N [--features LIST] (--days N | --expires YYYY-MM-DD)
         [--id ID] [--issued YYYY-MM-DD] [--out FILE]
                           sign a licence (features: ${FEATURES.join(", ")} or *; default *)
  verify FILE [--public-key KEY]
                           check a licence against KEY (base64 or PEM file), else OBSCURA_LICENSE_PUBLIC_KEYS,
                           else the built-in key
`;

const day = (d: Date) => d.toISOString().slice(0, 10);

function keygen(args: string[]): number {
  const { values } = parseArgs({ args, options: { out: { type: "string" } }, strict: true });
  if (!values.out) throw new UsageError("keygen needs --out DIR (where to write the key pair)");
  fs.mkdirSync(values.out, { recursive: true });
  const priv = path.join(values.out, "license-private.pem");
  if (fs.existsSync(priv)) throw new UsageError(`${priv} exists already; choose another --out (a key pair is never overwritten)`);
  const { publicKey, privateKey } = crypto.generateKeyPairSync("ed25519");
  fs.writeFileSync(priv, privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600, flag: "wx" });
  fs.writeFileSync(path.join(values.out, "license-public.pem"), publicKey.export({ format: "pem", type: "spki" }));
  process.stdout.write(
    `Wrote ${priv} (keep it secret) and ${path.join(values.out, "license-public.pem")}.\n` +
      `keyId: ${keyIdOf(publicKey)}\n` +
      `Servers trust it with:\n  OBSCURA_LICENSE_PUBLIC_KEYS=${rawPublicKey(publicKey).toString("base64")}\n`,
  );
  return 0;
}

function issue(args: string[]): number {
  const { values } = parseArgs({
    args,
    options: {
      key: { type: "string" },
      licensee: { type: "string" },
      seats: { type: "string" },
      features: { type: "string" },
      days: { type: "string" },
      expires: { type: "string" },
      issued: { type: "string" },
      id: { type: "string" },
      out: { type: "string" },
    },
    strict: true,
  });
  if (!values.key) throw new UsageError("issue needs --key PRIVATE.pem");
  if (!values.licensee) throw new UsageError("issue needs --licensee NAME");
  const seats = Number(values.seats);
  if (!values.seats || !Number.isInteger(seats) || seats < 1) throw new UsageError(`--seats must be a whole number, at least 1, not ${JSON.stringify(values.seats ?? "")}`);
  if (!values.days === !values.expires) throw new UsageError("give exactly one of --days N and --expires YYYY-MM-DD");
  const issued = values.issued ?? day(new Date());
  let expires = values.expires;
  if (values.days) {
    const n = Number(values.days);
    if (!Number.isInteger(n)) throw new UsageError(`--days must be a whole number, not ${JSON.stringify(values.days)}`);
    expires = day(new Date(Date.parse(issued) + n * 86_400_000));
  }
  let privateKey: crypto.KeyObject;
  try {
    privateKey = crypto.createPrivateKey(fs.readFileSync(values.key, "utf8"));
  } catch (e) {
    throw new UsageError(`could not read the private key ${values.key}: ${(e as Error).message}`);
  }
  const features = (values.features ?? "*").split(",").map((f) => f.trim()).filter(Boolean);
  const doc = signLicense(
    { id: values.id ?? `lic-${crypto.randomUUID()}`, licensee: values.licensee, seats, features, issuedAt: issued, expiresAt: expires! },
    privateKey,
  );
  const text = formatLicense(doc);
  if (values.out) {
    fs.writeFileSync(values.out, text);
    process.stderr.write(`Wrote the licence for ${doc.license.licensee} (${seats} seats, until ${doc.license.expiresAt}) to ${values.out}\n`);
  } else process.stdout.write(text);
  return 0;
}

function verify(args: string[]): number {
  const { values, positionals } = parseArgs({ args, options: { "public-key": { type: "string" } }, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new UsageError("verify needs exactly one licence FILE");
  const text = fs.readFileSync(positionals[0]!, "utf8");
  const keyArg = values["public-key"];
  const keys = keyArg ? parsePublicKeys(fs.existsSync(keyArg) ? fs.readFileSync(keyArg, "utf8") : keyArg) : trustedKeys();
  try {
    const license = verifyLicense(parseLicense(text), keys);
    const expired = isExpired(license);
    process.stdout.write(
      `${expired ? "EXPIRED" : "VALID"}: ${license.licensee}, ${license.seats} seats, features ${license.features.join(", ")}, ` +
        `issued ${license.issuedAt}, expires ${license.expiresAt} (id ${license.id})\n`,
    );
    return expired ? 1 : 0;
  } catch (e) {
    if (e instanceof LicenseError) {
      process.stderr.write(`REFUSED: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

function main(argv: string[]): number {
  const [command, ...rest] = argv;
  try {
    if (!command || command === "--help" || command === "-h") {
      process.stdout.write(HELP);
      return command ? 0 : 2;
    }
    if (command === "keygen") return keygen(rest);
    if (command === "issue") return issue(rest);
    if (command === "verify") return verify(rest);
    throw new UsageError(`unknown command ${JSON.stringify(command)}: use keygen, issue or verify`);
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`license: ${(e as Error).message}\nRun \`npm run license -- --help\` for the commands.\n`);
      return 2;
    }
    if (e instanceof LicenseError) {
      process.stderr.write(`license: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`license: ${(e as Error).message}\n`);
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
