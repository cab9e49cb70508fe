/**
 * Storage URI parsing: pure string work, no I/O (safe to call from zod refinements).
 *
 * Accepted forms (see docs of `inputUri` / `outputUri`):
 *   file:///abs/path            local path, percent-decoded
 *   file:///C:/dir/x.mp4        Windows drive, mapped WSL-style to `${OBSCURA_WINDOWS_DRIVE_ROOT ?? "/mnt"}/c/dir/x.mp4`
 *   s3://bucket/key             S3 or an S3-compatible store (key may be empty or end with "/")
 *   https://…?sv=…&sig=…        Azure blob (or container prefix) URL carrying a SAS signature
 *   http(s)://…                 any other URL: input only
 * A URI whose path part ends with "/" is a prefix (a "state bucket").
 * No Node-only imports here, so API schemas can use it anywhere.
 */
import { ObscuraError } from "@/lib/errors";

export type StorageUri =
  | { kind: "file"; path: string }
  | { kind: "s3"; bucket: string; key: string }
  | { kind: "azure"; url: string }
  | { kind: "http"; url: string };

export type StorageKind = StorageUri["kind"];

const OUTPUT_FORMS = "file:///<path>, file:///C:/<path>, s3://<bucket>/<key>, or an Azure blob URL with a SAS signature";
const INPUT_FORMS = `an http(s) URL, ${OUTPUT_FORMS}`;

/** Parses a storage URI; throws INVALID_ARGUMENT (with a redacted URI) when it is not an accepted form. */
export function parseStorageUri(uri: string): StorageUri {
  const parsed = tryParse(uri);
  if (typeof parsed === "string") throw new ObscuraError("INVALID_ARGUMENT", `${parsed} (got ${redactUri(uri)})`);
  return parsed;
}

/** A human message when `uri` is not acceptable for the given use, else null. */
export function uriProblem(uri: string, use: "input" | "output"): string | null {
  const parsed = tryParse(uri);
  const forms = use === "input" ? INPUT_FORMS : OUTPUT_FORMS;
  if (typeof parsed === "string") return `${parsed}; must be one of ${forms}`;
  if (use === "output" && parsed.kind === "http") {
    return `a plain http(s) URL cannot be written to; must be one of ${forms}`;
  }
  return null;
}

/** True when the path part (before any `?`) ends with "/": the URI names a prefix, not an object. */
export function isPrefixUri(uri: string): boolean {
  return pathPart(uri).endsWith("/");
}

/**
 * Appends a plain (not yet percent-encoded) relative name to a prefix URI, keeping a SAS query string at the
 * end: "x/y.json" names an object, "sub/" a sub-prefix, "" the prefix itself. Segments are percent-encoded
 * for file and URL forms (s3 keys are literal).
 */
export function joinUri(prefixUri: string, relativeName: string): string {
  if (!isPrefixUri(prefixUri)) {
    throw new ObscuraError("INVALID_ARGUMENT", `not a prefix (must end with "/"): ${redactUri(prefixUri)}`);
  }
  if (relativeName === "") return prefixUri;
  const segments = relativeName.replace(/\/$/, "").split("/");
  if (segments.some((s) => s === "" || s === "." || s === "..")) {
    throw new ObscuraError("INVALID_ARGUMENT", `invalid relative name "${relativeName}": no leading "/", empty, "." or ".." segments`);
  }
  if (parseStorageUri(prefixUri).kind === "s3") return prefixUri + relativeName;
  const rel = segments.map(encodeSegment).join("/") + (relativeName.endsWith("/") ? "/" : "");
  const q = prefixUri.indexOf("?");
  return q < 0 ? prefixUri + rel : prefixUri.slice(0, q) + rel + prefixUri.slice(q);
}

const SECRET_PARAM = /^(sig|.*(signature|token|key|credential|secret|password).*)$/i;

/** The URI with secret query values (SAS `sig`, tokens, keys, credentials) and URL passwords replaced by REDACTED. */
export function redactUri(uri: string): string {
  let out = uri.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*):[^/?#@]*@/i, "$1:REDACTED@");
  const q = out.indexOf("?");
  if (q < 0) return out;
  const hash = out.indexOf("#", q);
  const query = out.slice(q + 1, hash < 0 ? undefined : hash);
  const redacted = query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      const name = safeDecode(eq < 0 ? pair : pair.slice(0, eq));
      return eq >= 0 && SECRET_PARAM.test(name) ? `${pair.slice(0, eq)}=REDACTED` : pair;
    })
    .join("&");
  out = out.slice(0, q + 1) + redacted + (hash < 0 ? "" : out.slice(hash));
  return out;
}

/** Secret values found in a URI's query/userinfo (raw and decoded), to scrub from third-party error text. */
export function secretValues(uri: string): string[] {
  const values: string[] = [];
  try {
    const u = new URL(uri);
    if (u.password) values.push(u.password, safeDecode(u.password));
    for (const [name, value] of u.searchParams) if (value && SECRET_PARAM.test(name)) values.push(value, encodeURIComponent(value));
  } catch {
    /* not a URL: nothing to collect */
  }
  return [...new Set(values.filter((v) => v.length >= 4))];
}

// ---------------------------------------------------------------------------------------------

function tryParse(uri: string): StorageUri | string {
  if (typeof uri !== "string" || uri.trim() === "") return "the URI is empty";
  if (uri !== uri.trim()) return "the URI has leading or trailing whitespace";
  if (/^[a-z]:[\\/]/i.test(uri)) return "a bare Windows path is not a URI; write it as file:///C:/<path>";
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase();
  if (!scheme) {
    return /^[\\/]/.test(uri) ? "a bare path is not a URI; write it as file:///<absolute path>" : "not a URI (relative paths are not accepted)";
  }
  switch (scheme) {
    case "file":
      return parseFile(uri);
    case "s3":
      return parseS3(uri);
    case "http":
    case "https":
      return parseHttp(uri);
    default:
      return `the scheme "${scheme}:" is not supported`;
  }
}

function parseFile(uri: string): StorageUri | string {
  const rest = uri.slice("file:".length);
  if (!rest.startsWith("///")) {
    if (/^\/\/[a-z]:/i.test(rest)) return "a Windows path needs three slashes: file:///C:/<path>";
    return "a file URI must be absolute: file:///<absolute path> (a host or relative path is not accepted)";
  }
  const raw = percentDecode(rest.slice(2)); // keeps the leading "/"
  if (raw.includes("\0")) return "a file path must not contain NUL characters";
  const drive = /^\/([a-z]):(?:[\\/](.*))?$/i.exec(raw);
  if (drive) {
    const root = process.env.OBSCURA_WINDOWS_DRIVE_ROOT ?? "/mnt";
    const inner = normalizePath("/" + (drive[2] ?? "").replace(/\\/g, "/")); // ".." cannot leave the drive
    return { kind: "file", path: normalizePath(`${root}/${drive[1].toLowerCase()}${inner}`) };
  }
  if (/^\/[a-z]:/i.test(raw)) return "a Windows path must look like file:///C:/<path>";
  return { kind: "file", path: normalizePath(raw) };
}

function parseS3(uri: string): StorageUri | string {
  const m = /^s3:\/\/([^/?#]+)\/(.*)$/i.exec(uri);
  if (!m) return "an S3 URI must look like s3://<bucket>/<key> (use s3://<bucket>/ for the whole bucket)";
  const [, bucket, key] = m;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(bucket)) return `"${bucket}" is not a valid S3 bucket name`; // lenient: S3 clones differ
  if (key.startsWith("/")) return "an S3 key must not start with \"/\"";
  return { kind: "s3", bucket, key };
}

function parseHttp(uri: string): StorageUri | string {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return "not a valid http(s) URL";
  }
  if (!u.hostname) return "an http(s) URL needs a host";
  const q = u.searchParams;
  if (q.has("sig") && (q.has("sv") || q.has("se"))) {
    const segs = u.pathname.split("/").filter(Boolean);
    if (segs.length === 0) return "an Azure SAS URL must name a container: https://<account>.blob.core.windows.net/<container>/<path>?<SAS>";
    return { kind: "azure", url: uri };
  }
  return { kind: "http", url: uri };
}

/** POSIX normalisation of an absolute path: drops "", "." and resolves ".." segments; keeps a trailing "/". */
function normalizePath(p: string): string {
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "..") out.pop();
    else if (seg !== "" && seg !== ".") out.push(seg);
  }
  return "/" + out.join("/") + (out.length > 0 && p.endsWith("/") ? "/" : "");
}

function pathPart(uri: string): string {
  const q = uri.search(/[?#]/);
  return q < 0 ? uri : uri.slice(0, q);
}

function encodeSegment(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

/** Decodes valid %XX runs; leaves a stray "%" (e.g. "100%.mp4") as written. */
function percentDecode(s: string): string {
  return s.replace(/(?:%[0-9a-f]{2})+/gi, (run) => safeDecode(run));
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * A file beside `uri`: its name with `suffix` in place of the extension (`.../clip.mp4`, ".vtt" ->
 * `.../clip.vtt`; a name without extension, or a dot-file, keeps its whole name), keeping the
 * query of a signed URL.
 */
export function siblingUri(uri: string, suffix: string): string {
  const q = uri.indexOf("?");
  const base = q < 0 ? uri : uri.slice(0, q);
  const query = q < 0 ? "" : uri.slice(q);
  const slash = base.lastIndexOf("/");
  const dot = base.lastIndexOf(".");
  const stem = dot > slash + 1 ? base.slice(0, dot) : base;
  return stem + suffix + query;
}
