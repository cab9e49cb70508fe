/**
 * Plain http(s) inputs, read with undici: streamed to disk, redirects followed (max 5), size and time
 * limited from the environment at call time:
 *   OBSCURA_HTTP_MAX_BYTES        default 21474836480 (20 GiB) -> RESOURCE_EXHAUSTED, partial file removed
 *   OBSCURA_HTTP_TIMEOUT_SECONDS  default 3600, whole transfer -> DEADLINE_EXCEEDED
 * Connecting and receiving the response headers each have 30 s. http(s) URLs cannot be written or listed.
 */
import { Transform } from "node:stream";
import net from "node:net";
import { Agent, buildConnector, interceptors, request, type Dispatcher } from "undici";
import { ObscuraError, isObscuraError } from "@/lib/errors";
import { redactUri } from "@/lib/storage-uri";
import { checkAddress, denyPolicy, guardedLookup } from "./address-policy";
import { cancelled, isAbortError, streamToFile } from "./file";
import type { Backend, TransferOptions } from "./index";

type HttpLoc = { kind: "http"; url: string };

const CONNECT_TIMEOUT_MS = 30_000;
const MAX_REDIRECTS = 5;

export const httpBackend: Backend<HttpLoc> = {
  async download(loc, destPath, opts) {
    return fetchUrl(loc.url, {}, opts, async (res, limits, signal) => {
      const total = contentLength(res);
      if (total !== undefined && total > limits.maxBytes) throw tooLarge(loc.url, limits);
      const bytes = await streamToFile(res.body, destPath, { ...opts, signal }, total, [sizeLimit(loc.url, limits)]);
      return { bytes };
    });
  },
  async read(loc, opts) {
    return fetchUrl(loc.url, {}, opts, async (res, limits) => {
      const total = contentLength(res);
      if (total !== undefined && total > limits.maxBytes) throw tooLarge(loc.url, limits);
      const chunks: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > limits.maxBytes) throw tooLarge(loc.url, limits);
        chunks.push(chunk);
        opts.onProgress?.(bytes, total);
      }
      return Buffer.concat(chunks);
    });
  },
  async exists(loc, opts) {
    const okStatuses = [404, 410, 405, 501];
    const statusOf = async (res: Dispatcher.ResponseData) => {
      await res.body.dump();
      return res.statusCode;
    };
    let status = await fetchUrl(loc.url, { method: "HEAD", okStatuses }, opts, statusOf);
    if (status === 405 || status === 501) {
      status = await fetchUrl(loc.url, { headers: { range: "bytes=0-0" }, okStatuses }, opts, statusOf); // servers that refuse HEAD
    }
    return status >= 200 && status < 300;
  },
  async upload(_src, loc) {
    throw notWritable(loc.url);
  },
  async write(loc) {
    throw notWritable(loc.url);
  },
  async list(loc) {
    throw notBucket(loc.url);
  },
  async remove(loc) {
    throw notBucket(loc.url);
  },
};

interface Limits {
  maxBytes: number;
  /** What sets maxBytes, for the error message. */
  limitName: string;
  timeoutSeconds: number;
}

function limitsFromEnv(opts: TransferOptions = {}): Limits {
  const env = positiveNumber(process.env.OBSCURA_HTTP_MAX_BYTES, 21_474_836_480);
  return {
    maxBytes: opts.maxBytes !== undefined ? Math.min(env, opts.maxBytes) : env,
    limitName: opts.maxBytes !== undefined && opts.maxBytes < env ? (opts.limitName ?? "the request's limit") : "OBSCURA_HTTP_MAX_BYTES",
    timeoutSeconds: Math.min(positiveNumber(process.env.OBSCURA_HTTP_TIMEOUT_SECONDS, 3600), 2_147_483), // timer limit (~24.8 days)
  };
}

interface RequestShape {
  method?: "GET" | "HEAD";
  headers?: Record<string, string>;
  /** Non-2xx statuses handed to `use` instead of failing. */
  okStatuses?: number[];
}

/** One request with its own agent: sends, checks the status, hands the response to `use`, maps every failure. */
async function fetchUrl<T>(
  url: string,
  { method = "GET", headers = {}, okStatuses = [] }: RequestShape,
  opts: TransferOptions,
  use: (res: Dispatcher.ResponseData, limits: Limits, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const limits = limitsFromEnv(opts);
  const deadline = AbortSignal.timeout(limits.timeoutSeconds * 1000);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  // Every connection (redirects too) is checked against OBSCURA_HTTP_DENY: names by their DNS
  // answers, literal IP hosts directly.
  const policy = denyPolicy();
  const connector = buildConnector({ timeout: CONNECT_TIMEOUT_MS, lookup: guardedLookup(policy), ...(opts.ignoreCertificateErrors ? { rejectUnauthorized: false } : {}) } as buildConnector.BuildOptions);
  const agent = new Agent({
    connect: (o, cb) => {
      const host = o.hostname.replace(/^\[|\]$/g, "");
      if (net.isIP(host)) {
        try {
          checkAddress(host, host, policy);
        } catch (e) {
          return cb(e as Error, null);
        }
      }
      return connector(o, cb);
    },
    headersTimeout: CONNECT_TIMEOUT_MS,
  });
  try {
    // Credentials in the URL (https://user:pass@host/...) become Basic authentication; the
    // redirect handler drops the header when a redirect leaves the origin.
    const target = new URL(url);
    const auth: Record<string, string> = {};
    if (target.username || target.password) {
      auth.authorization = "Basic " + Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString("base64");
      target.username = "";
      target.password = "";
    }
    const res = await request(target.toString(), {
      method,
      signal,
      headers: { "user-agent": "obscura-storage", ...auth, ...headers },
      dispatcher: agent.compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTS })),
    });
    if ((res.statusCode < 200 || res.statusCode >= 300) && !okStatuses.includes(res.statusCode)) {
      await res.body.dump().catch(() => {});
      throw statusError(url, res.statusCode);
    }
    return await use(res, limits, signal);
  } catch (e) {
    if (opts.signal?.aborted) throw cancelled(redactUri(url));
    if (deadline.aborted) {
      throw new ObscuraError("DEADLINE_EXCEEDED", `reading ${redactUri(url)} took longer than ${limits.timeoutSeconds} s (OBSCURA_HTTP_TIMEOUT_SECONDS)`);
    }
    throw networkError(e, url, opts);
  } finally {
    agent.destroy().catch(() => {});
  }
}

function statusError(url: string, status: number): ObscuraError {
  const where = redactUri(url);
  if (status === 404 || status === 410) return new ObscuraError("NOT_FOUND", `${where} answered HTTP ${status}: not found`);
  if (status === 401 || status === 403) return new ObscuraError("PERMISSION_DENIED", `${where} answered HTTP ${status}: access denied`);
  if (status >= 300 && status < 400) return new ObscuraError("UNAVAILABLE", `${where} answered HTTP ${status}: too many redirects (more than ${MAX_REDIRECTS}) or no Location`);
  return new ObscuraError("UNAVAILABLE", `${where} answered HTTP ${status}`);
}

const CERT_ERROR = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS_CERT_ALTNAME_INVALID/;

function networkError(e: unknown, url: string, opts: TransferOptions): ObscuraError {
  if (isObscuraError(e)) return e;
  if (isAbortError(e)) return cancelled(redactUri(url));
  const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code ?? "";
  const reason = err.cause?.message ?? err.message ?? String(e);
  const host = hostOf(url);
  if (CERT_ERROR.test(code) && !opts.ignoreCertificateErrors) {
    return new ObscuraError(
      "UNAVAILABLE",
      `the TLS certificate of ${host} was rejected (${code}: ${reason}); if you trust this server, set videoContext.prepareConfig.ignoreCertificateErrors to true`,
    );
  }
  if (code === "UND_ERR_CONNECT_TIMEOUT") return new ObscuraError("DEADLINE_EXCEEDED", `could not connect to ${host} within ${CONNECT_TIMEOUT_MS / 1000} s`);
  if (code === "UND_ERR_HEADERS_TIMEOUT") return new ObscuraError("DEADLINE_EXCEEDED", `${host} did not answer within ${CONNECT_TIMEOUT_MS / 1000} s`);
  if (code === "UND_ERR_BODY_TIMEOUT") return new ObscuraError("DEADLINE_EXCEEDED", `${host} stopped sending data while reading ${redactUri(url)}`);
  return new ObscuraError("UNAVAILABLE", `cannot read ${redactUri(url)}: ${code ? `${code}: ` : ""}${reason}`);
}

/** A pass-through that fails with RESOURCE_EXHAUSTED once more than `max` bytes went through. */
function sizeLimit(url: string, limits: Limits): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      cb(seen > limits.maxBytes ? tooLarge(url, limits) : null, chunk);
    },
  });
}

function tooLarge(url: string, limits: Limits): ObscuraError {
  return new ObscuraError("RESOURCE_EXHAUSTED", `${redactUri(url)} is larger than the limit of ${limits.maxBytes} bytes (${limits.limitName})`);
}

function notBucket(url: string): ObscuraError {
  return new ObscuraError("INVALID_ARGUMENT", `${redactUri(url)} cannot be listed: state buckets must be file, s3 or Azure SAS URIs`);
}

function notWritable(url: string): ObscuraError {
  return new ObscuraError("INVALID_ARGUMENT", `${redactUri(url)} is a plain http(s) URL and cannot be written to; use file:///, s3:// or an Azure blob URL with a SAS signature`);
}

function contentLength(res: Dispatcher.ResponseData): number | undefined {
  const v = Number(res.headers["content-length"]);
  return Number.isFinite(v) && v >= 0 && res.headers["content-length"] !== undefined ? v : undefined;
}

function positiveNumber(raw: string | undefined, fallback: number): number {
  const v = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isFinite(v) && v > 0 ? v : fallback;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return redactUri(url);
  }
}
