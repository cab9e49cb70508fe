/**
 * Real local storage servers for tests: s3rver (in process) and azurite-blob (child process).
 * Each start function picks a free port and a fresh temp dir; `stop()` shuts the server down and removes the dir.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import fsp from "node:fs/promises";
import type http from "node:http";
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

interface S3rverInstance {
  run(): Promise<net.AddressInfo>;
  close(): Promise<void>;
  httpServer?: http.Server;
}
type S3rverCtor = new (opts: Record<string, unknown>) => S3rverInstance;

export async function startS3rver(): Promise<{ endpoint: string; bucket: string; env: Record<string, string>; stop(): Promise<void> }> {
  const S3rver = createRequire(import.meta.url)("s3rver") as S3rverCtor; // ships no types
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), "obscura-s3rver-"));
  const bucket = "obscura-test";
  const server = new S3rver({ address: "127.0.0.1", port: await freePort(), silent: !process.env.S3RVER_DEBUG, directory: dir, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
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
    async stop() {
      server.httpServer?.closeAllConnections(); // keep-alive sockets would hold close() open
      await server.close().catch(() => {});
      await fsp.rm(dir, { recursive: true, force: true });
    },
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
  const bin = path.resolve(import.meta.dirname, "../../node_modules/.bin/azurite-blob");
  const args = ["--blobHost", "127.0.0.1", "--blobPort", String(port), "--location", dir, "--silent", "--skipApiVersionCheck", "--loose"];
  const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const blobEndpoint = `http://127.0.0.1:${port}/${ACCOUNT}`;

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
    await fsp.rm(dir, { recursive: true, force: true });
  };

  try {
    await waitUntilAnswering(`${blobEndpoint}?comp=list`, () => child.exitCode !== null || child.signalCode !== null, () => stderr);
  } catch (e) {
    await stop();
    throw e;
  }

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

async function waitUntilAnswering(url: string, hasExited: () => boolean, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (hasExited()) throw new Error(`azurite-blob exited before answering: ${stderr().trim()}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return; // any HTTP answer (even 403) means it is up
    } catch {
      if (Date.now() > deadline) throw new Error(`azurite-blob did not answer at ${url} within 30 s: ${stderr().trim()}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
}
