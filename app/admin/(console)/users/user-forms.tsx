"use client";
import { useActionState, useState } from "react";
import { Alert, Button, Field, Select } from "@/components/ui";
import { PASSWORD_HINT } from "@/lib/password-rules";
import { createUserAction, userAction, type FormState } from "../../actions";

export function CreateUserForm() {
  const [state, action, pending] = useActionState<FormState, FormData>(createUserAction, {});
  const f = state.fieldErrors ?? {};
  return (
    <form action={action} className="grid gap-4 md:grid-cols-2" noValidate key={state.ok ? state.message : "form"}>
      <div className="md:col-span-2 space-y-2">
        {state.error && <Alert tone="error">{state.error}</Alert>}
        {state.ok && state.message && <Alert tone="success">{state.message}</Alert>}
      </div>
      <Field label="Username" name="username" required defaultValue={state.ok ? "" : state.values?.username} error={f.username} hint="3-64 characters: a-z, 0-9, dot, dash, underscore" />
      <Field label="Display name (optional)" name="displayName" defaultValue={state.ok ? "" : state.values?.displayName} error={f.displayName} />
      <Field label="Password" name="password" type="password" autoComplete="new-password" required error={f.password} hint={PASSWORD_HINT} />
      <Select label="Role" name="role" defaultValue={state.ok ? "reviewer" : (state.values?.role ?? "reviewer")} error={f.role}>
        <option value="reviewer">Reviewer: reviews and redacts the videos shared with them</option>
        <option value="admin">Administrator: everything, including this console</option>
      </Select>
      <div className="md:col-span-2">
        <Button type="submit" disabled={pending}>
          {pending ? "Adding…" : "Add user"}
        </Button>
      </div>
    </form>
  );
}

export function UserActions({ id, username, status, role }: { id: string; username: string; status: "active" | "disabled" | "deleted"; role: "admin" | "reviewer" }) {
  const [state, action, pending] = useActionState<FormState, FormData>(userAction, {});
  const [resetting, setResetting] = useState(false);
  return (
    <div className="flex flex-col items-end gap-2">
      <form action={action} className="flex flex-wrap justify-end gap-2">
        <input type="hidden" name="id" value={id} />
        {status === "active" ? (
          <Button variant="secondary" name="op" value="disable" disabled={pending} aria-label={`Disable ${username}`}>
            Disable
          </Button>
        ) : (
          <Button variant="secondary" name="op" value="enable" disabled={pending} aria-label={`Enable ${username}`}>
            Enable
          </Button>
        )}
        <Button variant="secondary" name="op" value={role === "admin" ? "make-reviewer" : "make-admin"} disabled={pending} aria-label={role === "admin" ? `Make ${username} a reviewer` : `Make ${username} an administrator`}>
          {role === "admin" ? "Make reviewer" : "Make admin"}
        </Button>
        <Button type="button" variant="secondary" onClick={() => setResetting((r) => !r)} aria-label={`Reset the password of ${username}`}>
          Reset password
        </Button>
        <Button
          variant="danger"
          name="op"
          value="delete"
          disabled={pending}
          aria-label={`Delete ${username}`}
          onClick={(e) => {
            if (!confirm(`Delete ${username}? Their past edits keep their name.`)) e.preventDefault();
          }}
        >
          Delete
        </Button>
      </form>
      {resetting && (
        <form action={action} className="flex items-start gap-2">
          <input type="hidden" name="id" value={id} />
          <input type="hidden" name="op" value="reset" />
          <input
            name="password"
            type="password"
            placeholder="New password"
            aria-label={`New password for ${username}`}
            autoComplete="new-password"
            className="w-56 rounded-md px-3 py-1.5 text-sm ring-1 ring-slate-300 ring-inset"
          />
          <Button type="submit" disabled={pending}>
            Set
          </Button>
        </form>
      )}
      {state.error && <p role="alert" className="max-w-sm text-right text-sm text-red-700">{state.error}</p>}
      {state.fieldErrors?.password && <p role="alert" className="max-w-sm text-right text-sm text-red-700">{state.fieldErrors.password}</p>}
      {state.ok && state.message && <p className="text-sm text-emerald-700">{state.message}</p>}
    </div>
  );
}
