/** Validates a request body with a zod schema and reports every problem at once. */
import { z } from "zod";
import { ObscuraError, type ErrorDetail } from "@/lib/errors";

function fieldOf(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += (out ? "." : "") + String(p);
  }
  return out || "(body)";
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  if (s === undefined) return String(v);
  return s.length > 80 ? s.slice(0, 77) + "..." : s;
}

export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        details.push({ field: fieldOf([...issue.path, key]), problem: `unknown field "${key}" is not allowed` });
      }
      continue;
    }
    if (issue.code === "invalid_union" && issue.errors?.length) {
      details.push(...issuesToDetails(issue.errors.flat()));
      continue;
    }
    const input = (issue as { input?: unknown }).input;
    const missing = input === undefined && issue.code === "invalid_type";
    const field = fieldOf(issue.path);
    const problem = missing ? `${field} is required` : input === undefined ? issue.message : `${issue.message} (got ${show(input)})`;
    details.push({ field, problem });
  }
  return details;
}

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body, { reportInput: true });
  if (r.success) return r.data;
  const details = issuesToDetails(r.error.issues);
  const summary = details.length === 1 ? details[0]!.problem : `${details.length} problems in the request: ${details.map((d) => d.field).join(", ")}`;
  throw new ObscuraError("INVALID_ARGUMENT", summary, { details });
}
