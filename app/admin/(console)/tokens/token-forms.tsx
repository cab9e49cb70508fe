"use client";
import { useActionState, useState } from "react";
import { Alert, Button, Field, Select } from "@/components/ui";
import { createTokenAction, revokeTokenAction, type FormState } from "../../actions";

export function CreateTokenForm({ kinds }: { kinds: { value: string; label: string; where: string }[] }) {
  const [state, action, pending] = useActionState<FormState, FormData>(createTokenAction, {});
  const [kind, setKind] = useState(state.values?.kind ?? "bearer");
  const f = state.fieldErrors ?? {};
  return (
    <div className="space-y-4">
      {state.secret && (
        <Alert tone="success" title={state.message}>
          <p>Copy it now: it is not shown again.</p>
          <code data-testid="new-token" className="mt-2 block rounded bg-white px-3 py-2 font-mono text-sm break-all text-slate-900 ring-1 ring-emerald-200">
            {state.secret}
          </code>
        </Alert>
      )}
      {state.error && <Alert tone="error">{state.error}</Alert>}
      <form action={action} className="grid gap-4 md:grid-cols-3" noValidate>
        <Field label="Name" name="name" required defaultValue={state.ok ? "" : state.values?.name} error={f.name} hint="Who or what uses it, e.g. ingest-server-2" />
        <Select label="Kind" name="kind" value={kind} onChange={(e) => setKind(e.target.value)} error={f.kind} hint={kinds.find((k) => k.value === kind)?.where}>
          {kinds.map((k) => (
            <option key={k.value} value={k.value}>
              {k.label}
            </option>
          ))}
        </Select>
        {kind === "access" ? (
          <Field label="Monthly quota (calls)" name="quota" inputMode="numeric" defaultValue={state.values?.quota} error={f.quota} hint="Empty: no quota" />
        ) : (
          <div />
        )}
        <div className="md:col-span-3">
          <Button type="submit" disabled={pending}>
            {pending ? "Creating…" : "Create token"}
          </Button>
        </div>
      </form>
    </div>
  );
}

export function RevokeTokenButton({ id, name }: { id: string; name: string }) {
  const [state, action, pending] = useActionState<FormState, FormData>(revokeTokenAction, {});
  return (
    <form
      action={action}
      onSubmit={(e) => {
        if (!confirm(`Revoke ${name}? Programs using it stop working at once.`)) e.preventDefault();
      }}
    >
      <input type="hidden" name="id" value={id} />
      <Button variant="danger" disabled={pending} aria-label={`Revoke ${name}`}>
        Revoke
      </Button>
      {state.error && <p role="alert" className="text-sm text-red-700">{state.error}</p>}
    </form>
  );
}
