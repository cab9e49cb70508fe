/**
 * Real local storage servers for tests: s3rver and azurite-blob, each as a child process.
 * Set S3RVER_DEBUG=1 to see s3rver's request log.
 * Each start function picks a free port and a fresh temp dir; `stop()` shuts the server down and removes the dir.
 */
import { spawn } from "node:child_process";
import fsp from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {
  BlobSASPermissions,
  ContainerClient,
  ContainerSASPermissions,
  StorageSharedKeyCredential,
  generateBlobSASQueryParameters,
} from "@azure/storage-blob";

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

// ---- s3rver ------------------------------------------------------------------------------------

/**
 * s3rver runs as a child process with --openssl-legacy-provider: it encrypts ListObjectsV2 continuation
 * tokens with DES, which OpenSSL 3 refuses otherwise (every truncated listing would answer HTTP 500).
 */
export async function startS3rver(): Promise<{ endpoint: string; bucket: string; env: Record<string, string>; stop(): Promise<void> }> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), "obscura-s3rver-"));
  const bucket = "obscura-test";
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const bin = path.resolve(import.meta.dirname, "../../node_modules/s3rver/bin/s3rver.js");
  const args = ["--openssl-legacy-provider", bin, "-d", dir, "-a", "127.0.0.1", "-p", String(port), "--configure-bucket", bucket];
  if (!process.env.S3RVER_DEBUG) args.push("--silent");
  const { stop } = await startChild("s3rver", process.execPath, args, `${endpoint}/${bucket}?list-type=2`, dir);
  return {
    endpoint,
    bucket,
    env: {
      OBSCURA_S3_ENDPOINT: endpoint,
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER",
      AWS_REGION: "us-east-1",
      OBSCURA_S3_FORCE_PATH_STYLE: "true",
    },
    stop,
  };
}

// ---- azurite -----------------------------------------------------------------------------------

const ACCOUNT = "devstoreaccount1";
const ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const SAS_VERSION = "2025-11-05"; // newest service version azurite 3.35 knows

export async function startAzurite(): Promise<{
  blobEndpoint: string;
  stop(): Promise<void>;
  containerSasUrl(container: string, prefix?: string): Promise<string>;
  blobSasUrl(container: string, blobName: string): Promise<string>;
}> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), "obscura-azurite-"));
  const port = await freePort();
  const blobEndpoint = `http://127.0.0.1:${port}/${ACCOUNT}`;
  const bin = path.resolve(import.meta.dirname, "../../node_modules/.bin/azurite-blob");
  const args = ["--blobHost", "127.0.0.1", "--blobPort", String(port), "--location", dir, "--silent", "--skipApiVersionCheck", "--loose"];
  const { stop } = await startChild("azurite-blob", bin, args, `${blobEndpoint}?comp=list`, dir);

  const credential = new StorageSharedKeyCredential(ACCOUNT, ACCOUNT_KEY);
  const created = new Set<string>();
  const ensureContainer = async (container: string) => {
    if (created.has(container)) return;
    await new ContainerClient(`${blobEndpoint}/${container}`, credential).createIfNotExists();
    created.add(container);
  };
  const expiresOn = () => new Date(Date.now() + 24 * 3600 * 1000);
  const encodePath = (p: string) => p.split("/").map(encodeURIComponent).join("/");

  return {
    blobEndpoint,
    stop,
    async containerSasUrl(container, prefix = "") {
      await ensureContainer(container);
      const sas = generateBlobSASQueryParameters(
        { containerName: container, permissions: ContainerSASPermissions.parse("racwdl"), expiresOn: expiresOn(), version: SAS_VERSION },
        credential,
      ).toString();
      return `${blobEndpoint}/${container}/${encodePath(prefix)}?${sas}`;
    },
    async blobSasUrl(container, blobName) {
      await ensureContainer(container);
      const sas = generateBlobSASQueryParameters(
        { containerName: container, blobName, permissions: BlobSASPermissions.parse("racwd"), expiresOn: expiresOn(), version: SAS_VERSION },
        credential,
      ).toString();
      return `${blobEndpoint}/${container}/${encodePath(blobName)}?${sas}`;
    },
  };
}

/** Spawns a server, waits until `probeUrl` gives any HTTP answer; `stop()` kills it and removes `dir`. */
async function startChild(name: string, cmd: string, args: string[], probeUrl: string, dir: string): Promise<{ stop(): Promise<void> }> {
  const child = spawn(cmd, args, { stdio: ["ignore", process.env.S3RVER_DEBUG ? "inherit" : "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (running()) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
    await fsp.rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (!running()) {
      await stop();
      throw new Error(`${name} exited before answering: ${stderr.trim()}`);
    }
    try {
      await fetch(probeUrl, { signal: AbortSignal.timeout(2000) });
      return { stop }; // any HTTP answer (even 403) means it is up
    } catch {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`${name} did not answer at ${probeUrl} within 30 s: ${stderr.trim()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
