/**
 * S3 and S3-compatible stores (`s3://bucket/key`). One client per process, built on first use from the
 * standard AWS chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, profiles, …; region from AWS_REGION or
 * the profile, else us-east-1) plus:
 *   OBSCURA_S3_ENDPOINT (else AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL)   custom endpoint (MinIO, s3rver, …)
 *   OBSCURA_S3_FORCE_PATH_STYLE   true/false; default true when an endpoint is set
 * With a custom endpoint, checksums are only sent when required (older MinIO, Ceph, GCS interop … reject the SDK's newer
 * default trailers) unless AWS_REQUEST_CHECKSUM_CALCULATION / AWS_RESPONSE_CHECKSUM_VALIDATION say otherwise.
 * `resetS3Client()` drops the client so the next call reads the environment again.
 */
import { createReadStream } from "node:fs";
import fsp from "node:fs/promises";
import type { Readable } from "node:stream";
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { ObscuraError, isObscuraError } from "@/lib/errors";
import { cancelled, fsError, isAbortError, streamToFile } from "./file";
import type { Backend } from "./index";

type S3Loc = { kind: "s3"; bucket: string; key: string };

let client: S3Client | undefined;
let region: Promise<string> | undefined;

export function s3Client(): S3Client {
  client ??= new S3Client(configFromEnv());
  return client;
}

/** Forgets the shared client (tests change the environment between suites). */
export function resetS3Client(): void {
  client?.destroy();
  client = undefined;
  region = undefined;
}

function configFromEnv(): S3ClientConfig {
  const env = process.env;
  const endpoint = env.OBSCURA_S3_ENDPOINT || env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  const pathStyle = parseBool(env.OBSCURA_S3_FORCE_PATH_STYLE) ?? Boolean(endpoint);
  return {
    region: defaultRegion,
    ...(endpoint ? { endpoint } : {}),
    forcePathStyle: pathStyle,
    ...(endpoint && !env.AWS_REQUEST_CHECKSUM_CALCULATION ? { requestChecksumCalculation: "WHEN_REQUIRED" as const } : {}),
    ...(endpoint && !env.AWS_RESPONSE_CHECKSUM_VALIDATION ? { responseChecksumValidation: "WHEN_REQUIRED" as const } : {}),
  };
}

/** The SDK's own region lookup (AWS_REGION, profile), falling back to us-east-1 instead of failing. */
function defaultRegion(): Promise<string> {
  region ??= (async () => {
    const probe = new S3Client({});
    try {
      return await probe.config.region();
    } catch {
      return "us-east-1";
    } finally {
      probe.destroy();
    }
  })();
  return region;
}

export const s3Backend: Backend<S3Loc> = {
  async download(loc, destPath, opts) {
    const res = await s3Client()
      .send(new GetObjectCommand({ Bucket: loc.bucket, Key: loc.key }), { abortSignal: opts.signal })
      .catch((e) => {
        throw s3Error(e, loc);
      });
    const bytes = await streamToFile(res.Body as Readable, destPath, opts, res.ContentLength).catch((e) => {
      throw s3Error(e, loc);
    });
    return { bytes };
  },
  async upload(srcPath, loc, opts) {
    const { size } = await fsp.stat(srcPath).catch((e) => {
      throw fsError(e, srcPath);
    });
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const upload = new Upload({
      client: s3Client(),
      params: { Bucket: loc.bucket, Key: loc.key, Body: createReadStream(srcPath), ContentType: opts.contentType, ContentLength: size },
      abortController: abort,
      queueSize: 4,
      partSize: 8 * 1024 * 1024,
    });
    upload.on("httpUploadProgress", (p) => opts.onProgress?.(p.loaded ?? 0, size));
    try {
      await upload.done();
    } catch (e) {
      throw opts.signal?.aborted ? cancelled(uriOf(loc)) : s3Error(e, loc);
    } finally {
      opts.signal?.removeEventListener("abort", onAbort);
    }
  },
  async write(loc, data, opts) {
    await s3Client()
      .send(new PutObjectCommand({ Bucket: loc.bucket, Key: loc.key, Body: data, ContentType: opts.contentType }), { abortSignal: opts.signal })
      .catch((e) => {
        throw s3Error(e, loc);
      });
  },
  async read(loc, opts) {
    try {
      const res = await s3Client().send(new GetObjectCommand({ Bucket: loc.bucket, Key: loc.key }), { abortSignal: opts.signal });
      return Buffer.from(await res.Body!.transformToByteArray());
    } catch (e) {
      throw s3Error(e, loc);
    }
  },
  async exists(loc, opts) {
    try {
      if (loc.key === "" || loc.key.endsWith("/")) {
        const res = await s3Client().send(new ListObjectsV2Command({ Bucket: loc.bucket, Prefix: loc.key, MaxKeys: 1 }), { abortSignal: opts.signal });
        return (res.KeyCount ?? res.Contents?.length ?? 0) > 0;
      }
      await s3Client().send(new HeadObjectCommand({ Bucket: loc.bucket, Key: loc.key }), { abortSignal: opts.signal });
      return true;
    } catch (e) {
      const err = s3Error(e, loc);
      if (err.status === "NOT_FOUND") return false;
      throw err;
    }
  },
  async list(loc, opts) {
    const keys = await listKeys(loc, opts.signal);
    return keys
      .map((k) => k.slice(loc.key.length))
      .filter((name) => name && !name.endsWith("/")) // skip "folder" marker objects
      .sort();
  },
  async remove(loc, opts) {
    const keys = await listKeys(loc, opts.signal);
    try {
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000).map((Key) => ({ Key }));
        const res = await s3Client().send(new DeleteObjectsCommand({ Bucket: loc.bucket, Delete: { Objects: batch, Quiet: true } }), {
          abortSignal: opts.signal,
        });
        const failed = res.Errors?.[0];
        if (failed) throw Object.assign(new Error(failed.Message ?? "delete failed"), { name: failed.Code ?? "DeleteFailed" });
      }
    } catch (e) {
      throw s3Error(e, loc);
    }
    return keys.length;
  },
};

/** Every key under the prefix (all pages), unsorted. */
async function listKeys(loc: S3Loc, signal: AbortSignal | undefined): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  try {
    do {
      const page = await s3Client().send(new ListObjectsV2Command({ Bucket: loc.bucket, Prefix: loc.key, ContinuationToken: token }), {
        abortSignal: signal,
      });
      for (const obj of page.Contents ?? []) if (obj.Key) keys.push(obj.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (e) {
    throw s3Error(e, loc);
  }
  return keys;
}

function uriOf(loc: S3Loc): string {
  return `s3://${loc.bucket}/${loc.key}`;
}

/** Maps AWS SDK errors; messages name the s3:// URI (which carries no secrets). */
function s3Error(e: unknown, loc: S3Loc): ObscuraError {
  if (isObscuraError(e)) return e;
  const uri = uriOf(loc);
  if (isAbortError(e)) return cancelled(uri);
  if (typeof (e as NodeJS.ErrnoException | null)?.path === "string") return fsError(e, ""); // local disk, not the store
  const err = e as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const name = err.name ?? "";
  const status = err.$metadata?.httpStatusCode;
  if (name === "NoSuchBucket") return new ObscuraError("NOT_FOUND", `the S3 bucket "${loc.bucket}" does not exist (${uri})`);
  if (name === "NoSuchKey" || name === "NotFound" || status === 404) return new ObscuraError("NOT_FOUND", `no S3 object at ${uri}`);
  if (["AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled"].includes(name) || status === 403) {
    return new ObscuraError("PERMISSION_DENIED", `access to ${uri} was denied (${name || `HTTP ${status}`}); check the S3 credentials and bucket policy`);
  }
  if (name === "CredentialsProviderError") {
    return new ObscuraError("FAILED_PRECONDITION", `no S3 credentials are configured for ${uri} (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or an AWS profile)`);
  }
  const detail = [name, err.code, err.message].filter(Boolean).join(": ");
  // no `cause`: SDK errors carry the raw response, including the signed Authorization header
  return new ObscuraError("UNAVAILABLE", `S3 request for ${uri} failed${status ? ` with HTTP ${status}` : ""}: ${detail}`);
}

function parseBool(v: string | undefined): boolean | undefined {
  if (v === undefined || v.trim() === "") return undefined;
  return /^(1|true|yes|on)$/i.test(v.trim());
}
