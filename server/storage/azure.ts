/**
 * Azure Blob Storage through SAS URLs only (no account key in the product). Works with
 * `https://<account>.blob.core.windows.net/<container>/<path>?<SAS>` and the path-style form of
 * azurite/IP endpoints `http://127.0.0.1:10000/<account>/<container>/<path>?<SAS>`.
 * Objects need a blob or container SAS; listing a prefix needs a container SAS (sr=c) with list permission.
 */
import fsp from "node:fs/promises";
import { AnonymousCredential, BlobClient, BlockBlobClient, ContainerClient, type StoragePipelineOptions } from "@azure/storage-blob";
import { ObscuraError, isObscuraError } from "@/lib/errors";
import { redactUri } from "@/lib/storage-uri";
import { cancelled, fsError, isAbortError, streamToFile } from "./file";
import type { Backend } from "./index";

type AzureLoc = { kind: "azure"; url: string };

const PIPELINE: StoragePipelineOptions = { retryOptions: { maxTries: 3 } };
const anonymous = new AnonymousCredential();

export const azureBackend: Backend<AzureLoc> = {
  async download(loc, destPath, opts) {
    return guard(loc, "read", async () => {
      const res = await blobOf(loc).download(0, undefined, { abortSignal: opts.signal, maxRetryRequests: 5 });
      const bytes = await streamToFile(res.readableStreamBody!, destPath, opts, res.contentLength);
      return { bytes };
    });
  },
  async upload(srcPath, loc, opts) {
    const { size } = await fsp.stat(srcPath).catch((e) => {
      throw fsError(e, srcPath);
    });
    await guard(loc, "write", () =>
      blobOf(loc).uploadFile(srcPath, {
        abortSignal: opts.signal,
        blobHTTPHeaders: opts.contentType ? { blobContentType: opts.contentType } : undefined,
        onProgress: (p) => opts.onProgress?.(p.loadedBytes, size),
        concurrency: 4,
      }),
    );
  },
  async write(loc, data, opts) {
    await guard(loc, "write", () =>
      blobOf(loc).upload(data, data.length, {
        abortSignal: opts.signal,
        blobHTTPHeaders: opts.contentType ? { blobContentType: opts.contentType } : undefined,
      }),
    );
  },
  async read(loc, opts) {
    return guard(loc, "read", () => blobOf(loc).downloadToBuffer(0, undefined, { abortSignal: opts.signal }));
  },
  async exists(loc, opts) {
    if (new URL(loc.url).pathname.endsWith("/")) return (await listNames(loc, opts.signal, 1)).length > 0;
    return guard(loc, "read", () => blobOf(loc).exists({ abortSignal: opts.signal }));
  },
  async list(loc, opts) {
    return (await listNames(loc, opts.signal)).sort();
  },
  async remove(loc, opts) {
    const { container, prefix } = containerOf(loc);
    let removed = 0;
    await guard(loc, "write", async () => {
      for await (const item of container.listBlobsFlat({ prefix, abortSignal: opts.signal })) {
        const res = await container.deleteBlob(item.name, { abortSignal: opts.signal, deleteSnapshots: "include" }).catch((e) => {
          if ((e as { statusCode?: number }).statusCode === 404) return null; // already gone
          throw e;
        });
        if (res) removed++;
      }
    });
    return removed;
  },
};

function blobOf(loc: AzureLoc): BlockBlobClient {
  return new BlockBlobClient(loc.url, anonymous, PIPELINE);
}

/**
 * The container client for a prefix URL: same origin, the account/container part of the path and the
 * same SAS query. Path-style (account in the path) exactly when the SDK found an account name in the path.
 */
function containerOf(loc: AzureLoc): { container: ContainerClient; prefix: string } {
  const blob = new BlobClient(loc.url, anonymous, PIPELINE);
  const u = new URL(loc.url);
  const pathStyle = u.hostname.split(".")[1] !== "blob" && blob.accountName !== "";
  const containerPath = u.pathname.split("/").slice(0, pathStyle ? 3 : 2).join("/");
  return { container: new ContainerClient(u.origin + containerPath + u.search, anonymous, PIPELINE), prefix: blob.name };
}

async function listNames(loc: AzureLoc, signal: AbortSignal | undefined, limit = Infinity): Promise<string[]> {
  return guard(loc, "list", async () => {
    const { container, prefix } = containerOf(loc);
    const names: string[] = [];
    for await (const item of container.listBlobsFlat({ prefix, abortSignal: signal })) {
      const name = item.name.slice(prefix.length);
      if (name && !name.endsWith("/")) names.push(name);
      if (names.length >= limit) break;
    }
    return names;
  });
}

/** Runs an SDK call and maps its failure; messages carry the redacted URL only (RestErrors are not attached: they hold the signed URL). */
async function guard<T>(loc: AzureLoc, action: "read" | "write" | "list", fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw azureError(e, loc, action);
  }
}

function azureError(e: unknown, loc: AzureLoc, action: "read" | "write" | "list"): ObscuraError {
  if (isObscuraError(e)) return e;
  const where = redactUri(loc.url);
  if (isAbortError(e)) return cancelled(where);
  if (typeof (e as NodeJS.ErrnoException | null)?.path === "string") return fsError(e, ""); // local disk, not the store
  const err = e as { statusCode?: number; code?: string; message?: string; details?: { errorCode?: string } };
  const code = err.details?.errorCode ?? err.code ?? "";
  const firstLine = (err.message ?? String(e)).split("\n")[0];
  if (err.statusCode === 404) {
    if (code === "ContainerNotFound") return new ObscuraError("NOT_FOUND", `the Azure container of ${where} does not exist`);
    return new ObscuraError("NOT_FOUND", `no Azure blob at ${where}`);
  }
  if (err.statusCode === 403 || err.statusCode === 401) {
    const hint = action === "list" ? "listing needs a container SAS (sr=c) with list permission (sp includes l)" : `check that the SAS allows ${action} (sp=) and has not expired (se=)`;
    return new ObscuraError("PERMISSION_DENIED", `Azure refused to ${action} ${where} (${code || `HTTP ${err.statusCode}`}): ${hint}`);
  }
  if (err.statusCode) return new ObscuraError("UNAVAILABLE", `Azure request for ${where} failed with HTTP ${err.statusCode} (${code}): ${firstLine}`);
  return new ObscuraError("UNAVAILABLE", `cannot reach Azure storage for ${where}: ${code ? `${code}: ` : ""}${firstLine}`);
}
