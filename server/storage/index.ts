/**
 * Storage module: reads inputs from and writes outputs to storage URIs.
 *
 * URIs (pure helpers, re-exported from lib/storage-uri): `parseStorageUri`, `uriProblem` (for zod refinements),
 * `isPrefixUri`, `joinUri`, `redactUri`. Forms: file:///<path>, file:///C:/<path> (mapped under
 * OBSCURA_WINDOWS_DRIVE_ROOT, default /mnt), s3://<bucket>/<key>, Azure blob URLs with a SAS signature,
 * and plain http(s) URLs (input only).
 *
 * I/O, the same for every backend:
 *   downloadToFile / readBytes / exists          read an object (http, file, s3, azure)
 *   uploadFile / writeBytes                      write an object (file, s3, azure)
 *   listPrefix / downloadPrefix / uploadDir /    whole "state buckets": URIs ending with "/" (file, s3, azure);
 *   removePrefix
 *                                                names are relative to the prefix, recursive and sorted;
 *                                                an absent prefix lists as empty.
 * Every call honours `signal` (rejects with CANCELLED). Errors are ObscuraErrors (NOT_FOUND,
 * PERMISSION_DENIED, UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, INVALID_ARGUMENT, CANCELLED)
 * whose messages never contain secrets: URIs are passed through `redactUri`.
 *
 * Environment (read at call time): OBSCURA_WINDOWS_DRIVE_ROOT (file), OBSCURA_HTTP_MAX_BYTES,
 * OBSCURA_HTTP_TIMEOUT_SECONDS (http);
 * OBSCURA_S3_ENDPOINT / AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, OBSCURA_S3_FORCE_PATH_STYLE and the standard
 * AWS credential chain (s3, read when the client is built; see `resetS3Client`).
 */
import path from "node:path";
import { ObscuraError, isObscuraError } from "@/lib/errors";
import { isPrefixUri, joinUri, parseStorageUri, redactUri, secretValues, type StorageUri } from "@/lib/storage-uri";
import { cancelled, fileBackend, isAbortError, walkFiles } from "./file";
import { httpBackend } from "./http";
import { s3Backend } from "./s3";
import { azureBackend } from "./azure";

export { parseStorageUri, uriProblem, isPrefixUri, joinUri, redactUri, type StorageUri, type StorageKind } from "@/lib/storage-uri";
export { resetS3Client } from "./s3";

export interface TransferOptions {
  signal?: AbortSignal;
  /** Accept any TLS certificate (http(s) inputs only; `videoContext.prepareConfig.ignoreCertificateErrors`). */
  ignoreCertificateErrors?: boolean;
  /** Bytes moved so far (cumulative over all files for prefix operations) and the total when known. */
  onProgress?: (bytes: number, total?: number) => void;
  /** http(s) reads: a lower size limit than OBSCURA_HTTP_MAX_BYTES, and the name the error gives it. */
  maxBytes?: number;
  limitName?: string;
}
export type UploadOptions = TransferOptions & { contentType?: string };
export interface WriteOptions {
  contentType?: string;
  signal?: AbortSignal;
}

/** What each backend implements; `L` is its variant of StorageUri. Prefix/object checks are done here. */
export interface Backend<L> {
  download(loc: L, destPath: string, opts: TransferOptions): Promise<{ bytes: number }>;
  upload(srcPath: string, loc: L, opts: UploadOptions): Promise<void>;
  write(loc: L, data: Buffer, opts: WriteOptions): Promise<void>;
  read(loc: L, opts: TransferOptions): Promise<Buffer>;
  exists(loc: L, opts: TransferOptions): Promise<boolean>;
  /** Names relative to the prefix `loc`, recursive, sorted. */
  list(loc: L, opts: TransferOptions): Promise<string[]>;
  /** Deletes everything under the prefix `loc`; returns how many objects were removed. */
  remove(loc: L, opts: TransferOptions): Promise<number>;
}

export async function downloadToFile(uri: string, destPath: string, opts: TransferOptions = {}): Promise<{ bytes: number }> {
  return run(uri, "object", opts.signal, (b, loc) => b.download(loc, destPath, opts));
}

export async function uploadFile(srcPath: string, uri: string, opts: UploadOptions = {}): Promise<void> {
  const contentType = opts.contentType ?? contentTypeFor(uri);
  return run(uri, "object", opts.signal, (b, loc) => b.upload(srcPath, loc, { ...opts, contentType }));
}

export async function writeBytes(uri: string, data: Buffer | string, opts: WriteOptions = {}): Promise<void> {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const contentType = opts.contentType ?? contentTypeFor(uri);
  return run(uri, "object", opts.signal, (b, loc) => b.write(loc, buf, { ...opts, contentType }));
}

/** Reads a small object (manifests, JSON state) into memory. */
export async function readBytes(uri: string, opts: TransferOptions = {}): Promise<Buffer> {
  return run(uri, "object", opts.signal, (b, loc) => b.read(loc, opts));
}

/** Whether an object exists; for a prefix URI, whether anything is stored under it. */
export async function exists(uri: string, opts: TransferOptions = {}): Promise<boolean> {
  return run(uri, "any", opts.signal, (b, loc) => b.exists(loc, opts));
}

export async function listPrefix(prefixUri: string, opts: TransferOptions = {}): Promise<string[]> {
  return run(prefixUri, "prefix", opts.signal, (b, loc) => b.list(loc, opts));
}

/** Downloads every object under the prefix into `localDir`, keeping relative names; returns them. */
export async function downloadPrefix(prefixUri: string, localDir: string, opts: TransferOptions = {}): Promise<string[]> {
  const names = await listPrefix(prefixUri, opts);
  const root = path.resolve(localDir);
  for (const name of names) {
    const dest = path.resolve(root, name);
    if (!dest.startsWith(root + path.sep)) {
      throw new ObscuraError("INVALID_ARGUMENT", `the stored name "${name}" under ${redactUri(prefixUri)} escapes the target directory`);
    }
  }
  await eachFile(names, opts, (name, fileOpts) => downloadToFile(joinUri(prefixUri, name), path.resolve(root, name), fileOpts));
  return names;
}

/** Deletes every object under the prefix (STATE_DROP); returns how many were removed (0 when absent). */
export async function removePrefix(prefixUri: string, opts: { signal?: AbortSignal } = {}): Promise<number> {
  return run(prefixUri, "prefix", opts.signal, (b, loc) => b.remove(loc, opts));
}

/** Uploads every file under `localDir` to the prefix, keeping relative names; returns them. */
/** Uploads every file under `localDir` (names relative to it) but those in `opts.skip`. */
export async function uploadDir(localDir: string, prefixUri: string, opts: TransferOptions & { skip?: readonly string[] } = {}): Promise<string[]> {
  const target = parseStorageUri(prefixUri);
  requireShape(prefixUri, target, "prefix");
  const skip = new Set(opts.skip ?? []);
  const names = (
    await walkFiles(localDir).catch((e) => {
      throw new ObscuraError("NOT_FOUND", `cannot read the directory ${localDir}: ${(e as Error).message}`);
    })
  ).filter((n) => !skip.has(n));
  await eachFile(names, opts, (name, fileOpts) => uploadFile(path.join(localDir, name), joinUri(prefixUri, name), fileOpts));
  return names;
}

// ---------------------------------------------------------------------------------------------

type Shape = "object" | "prefix" | "any";

function backendOf(loc: StorageUri): Backend<StorageUri> {
  const backends = { file: fileBackend, http: httpBackend, s3: s3Backend, azure: azureBackend };
  return backends[loc.kind] as Backend<StorageUri>;
}

function requireShape(uri: string, loc: StorageUri, shape: Shape): void {
  const prefix = isPrefixUri(uri);
  if (shape === "object" && prefix) {
    throw new ObscuraError("INVALID_ARGUMENT", `${redactUri(uri)} ends with "/" (a prefix); a file name is needed here`);
  }
  if (shape === "prefix" && !prefix) {
    throw new ObscuraError("INVALID_ARGUMENT", `${redactUri(uri)} must end with "/" to name a prefix (state bucket)`);
  }
  if (shape === "prefix" && loc.kind === "http") {
    throw new ObscuraError("INVALID_ARGUMENT", `${redactUri(uri)}: state buckets must be file, s3 or Azure SAS URIs, not plain http(s)`);
  }
}

/** Parses, checks shape and abort, runs the backend call, and guarantees a secret-free ObscuraError. */
async function run<T>(uri: string, shape: Shape, signal: AbortSignal | undefined, fn: (b: Backend<StorageUri>, loc: StorageUri) => Promise<T>): Promise<T> {
  const loc = parseStorageUri(uri);
  requireShape(uri, loc, shape);
  if (signal?.aborted) throw cancelled(redactUri(uri));
  try {
    return await fn(backendOf(loc), loc);
  } catch (e) {
    let err: ObscuraError;
    if (isObscuraError(e)) err = e;
    else if (isAbortError(e) || signal?.aborted) err = cancelled(redactUri(uri));
    else err = new ObscuraError("UNAVAILABLE", `storage operation on ${redactUri(uri)} failed: ${(e as Error)?.message ?? String(e)}`);
    if (err.status !== "CANCELLED" && signal?.aborted) err = cancelled(redactUri(uri));
    for (const secret of secretValues(uri)) err.message = err.message.split(secret).join("REDACTED");
    throw err;
  }
}

/** Runs `fn` for each name, 4 at a time, with cumulative progress; the first error cancels the rest. */
async function eachFile(names: string[], opts: TransferOptions, fn: (name: string, o: TransferOptions) => Promise<unknown>): Promise<void> {
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const queue = [...names];
  const inFlight = new Map<string, number>();
  let done = 0;
  const report = () => opts.onProgress?.(done + [...inFlight.values()].reduce((a, b) => a + b, 0));
  const worker = async () => {
    while (queue.length > 0 && !signal.aborted) {
      const name = queue.shift()!;
      inFlight.set(name, 0);
      const onProgress = (bytes: number) => {
        inFlight.set(name, bytes);
        report();
      };
      try {
        await fn(name, { ...opts, signal, onProgress });
        done += inFlight.get(name) ?? 0;
      } catch (e) {
        stop.abort();
        throw e;
      } finally {
        inFlight.delete(name);
      }
      report();
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, names.length) }, worker));
  if (opts.signal?.aborted) throw cancelled("the files");
}

const CONTENT_TYPES: Record<string, string> = {
  ".json": "application/json",
  ".mp4": "video/mp4",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".png": "image/png",
  ".txt": "text/plain; charset=utf-8",
  ".vtt": "text/vtt",
  ".csv": "text/csv",
};

function contentTypeFor(uri: string): string | undefined {
  const pathOnly = uri.split(/[?#]/)[0];
  return CONTENT_TYPES[path.posix.extname(pathOnly).toLowerCase()];
}
