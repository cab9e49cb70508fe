"use client";
import { useActionState } from "react";
import { Alert, Button, Field } from "@/components/ui";
import { PASSWORD_HINT } from "@/lib/password-rules";
import { changePasswordAction, type PasswordState } from "./actions";

export function PasswordForm() {
  const [state, action, pending] = useActionState<PasswordState, FormData>(changePasswordAction, {});
  const f = state.fieldErrors ?? {};
  return (
    <form action={action} className="space-y-4" noValidate>
      {state.error && <Alert tone="error">{state.error}</Alert>}
      {state.ok && <Alert tone="success">Your password was changed.</Alert>}
      <Field label="Current password" name="current" type="password" autoComplete="current-password" required error={f.current} />
      <Field label="New password" name="password" type="password" autoComplete="new-password" required error={f.password} hint={PASSWORD_HINT} />
      <Field label="Repeat the new password" name="confirm" type="password" autoComplete="new-password" required error={f.confirm} />
      <Button type="submit" disabled={pending}>
        {pending ? "Saving…" : "Change password"}
      </Button>
    </form>
  );
}
