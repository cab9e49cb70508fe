/**
 * The HTTP edge shared by every API route: reading JSON bodies within limits, JSON responses, and
 * the one place where typed errors become HTTP statuses and the error body of docs/errors.md.
 */
import { ObscuraError, toObscuraError } from "@/lib/errors";
import { log } from "../log";

export function json(data: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(data), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}

export function errorResponse(e: unknown): Response {
  const err = toObscuraError(e);
  if (err.httpStatus >= 500) log.error("request failed", { status: err.status, message: err.message });
  const headers: Record<string, string> = {};
  if (err.httpStatus === 401) headers["www-authenticate"] = 'Bearer realm="obscura"';
  // Internal errors keep their detail in the log, never in the response.
  const body = err.httpStatus >= 500 && err.status === "INTERNAL" ? new ObscuraError("INTERNAL", "internal error; see the server log").toBody() : err.toBody();
  return json(body, err.httpStatus, headers);
}

/** Reads a JSON body: 415 for a non-JSON content type, 413 past `maxBytes`, 400 for malformed JSON. */
export async function readJson(req: Request, maxBytes: number): Promise<unknown> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type && type !== "application/json" && !type.endsWith("+json")) {
    throw new ObscuraError("INVALID_ARGUMENT", `Content-Type must be application/json, got ${JSON.stringify(type)}`, { httpStatus: 415 });
  }
  const tooLarge = () => new ObscuraError("INVALID_ARGUMENT", `request body must be at most ${maxBytes} bytes`, { httpStatus: 413 });
  const text = (await readBodyBytes(req, maxBytes, tooLarge)).toString("utf8");
  if (!text.trim()) throw new ObscuraError("INVALID_ARGUMENT", "request body must be a JSON object, got an empty body");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ObscuraError("INVALID_ARGUMENT", `request body is not valid JSON: ${(e as Error).message}`);
  }
}

/** A request body as bytes, failing with `tooLarge()` as soon as it passes `maxBytes` (declared or streamed). */
export async function readBodyBytes(req: Request, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    const reader = req.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks);
}

export function methodNotAllowed(allowed: string[]): Response {
  const err = new ObscuraError("INVALID_ARGUMENT", `method not allowed here; allowed: ${allowed.join(", ")}`, { httpStatus: 405 });
  return json({ error: { ...err.toBody().error, status: "METHOD_NOT_ALLOWED" } }, 405, { allow: allowed.join(", ") });
}
