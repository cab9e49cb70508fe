/** What a form's server action answers, and how a refusal from server/ becomes inline errors. */
import { ObscuraError } from "@/lib/errors";

export interface FormState {
  ok?: boolean;
  error?: string;
  message?: string;
  fieldErrors?: Record<string, string>;
  values?: Record<string, string>;
  /** A token shown once after it was created. */
  secret?: string;
}

/** An ObscuraError for a person: its details become field errors where they name a field (last path segment). */
export function formFailure(e: unknown, values?: Record<string, string>): FormState {
  if (e instanceof ObscuraError) {
    const fieldErrors: Record<string, string> = {};
    for (const d of e.details) if (d.field) fieldErrors[d.field.split(".").pop()!] = d.problem ?? e.message;
    return Object.keys(fieldErrors).length ? { fieldErrors, values } : { error: e.message, values };
  }
  throw e;
}
