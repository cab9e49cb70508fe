"use client";
import { useActionState } from "react";
import { Alert, Button, Field } from "@/components/ui";
import { PASSWORD_HINT } from "@/lib/password-rules";
import { setupAction, type FormState } from "../actions";

export function SetupForm() {
  const [state, action, pending] = useActionState<FormState, FormData>(setupAction, {});
  const f = state.fieldErrors ?? {};
  return (
    <form action={action} className="space-y-4" noValidate>
      {state.error && <Alert tone="error">{state.error}</Alert>}
      <Field label="Username" name="username" autoComplete="username" required autoFocus defaultValue={state.values?.username} error={f.username} hint="3-64 characters: a-z, 0-9, dot, dash, underscore" />
      <Field label="Password" name="password" type="password" autoComplete="new-password" required error={f.password} hint={PASSWORD_HINT} />
      <Field label="Repeat the password" name="confirm" type="password" autoComplete="new-password" required error={f.confirm} />
      <Button type="submit" className="w-full" disabled={pending}>
        {pending ? "Creating…" : "Create administrator"}
      </Button>
    </form>
  );
}
