"use client";
import { useActionState } from "react";
import { Alert, Button, Field, TextArea } from "@/components/ui";
import { installLicenseAction, type FormState } from "../../actions";

export function LicenseForm() {
  const [state, action, pending] = useActionState<FormState, FormData>(installLicenseAction, {});
  const f = state.fieldErrors ?? {};
  return (
    <form action={action} className="space-y-4" noValidate>
      {state.error && <Alert tone="error" title="This licence was not installed">{state.error}</Alert>}
      {state.ok && state.message && <Alert tone="success">{state.message}</Alert>}
      <Field label="Licence file" name="file" type="file" accept=".lic,.json,.txt,text/plain,application/json" error={f.file} />
      <TextArea label="…or paste it" name="document" rows={6} defaultValue={state.ok ? "" : state.values?.document} error={f.document} />
      <Button type="submit" disabled={pending}>
        {pending ? "Checking…" : "Install licence"}
      </Button>
    </form>
  );
}
