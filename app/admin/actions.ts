"use server";
/**
 * Server actions of the admin pages: thin wrappers that check who is acting, call server/identity
 * or server/license, and turn their errors into messages for the form. Next.js refuses a server
 * action whose Origin is not this site (CSRF); Auth.js's own forms carry its CSRF token.
 */
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { revalidatePath } from "next/cache";
import { signIn } from "@/auth";
import { completeSetup, createToken, createUser, deleteUser, disableUser, enableUser, resetPassword, revokeToken, setRole } from "@/server/identity";
import { installLicense } from "@/server/license";
import { clientAddress } from "@/server/http/client-address";
import { adminActor } from "../_lib/session";
import { formFailure, type FormState } from "../_lib/form-state";

export type { FormState };

const text = (form: FormData, name: string) => String(form.get(name) ?? "").trim();

export async function setupAction(_prev: FormState, form: FormData): Promise<FormState> {
  const username = text(form, "username").toLowerCase();
  const password = String(form.get("password") ?? "");
  if (password !== String(form.get("confirm") ?? "")) return { fieldErrors: { confirm: "The two passwords differ." }, values: { username } };
  try {
    await completeSetup({ username, password }, { ip: clientAddress(await headers()) });
  } catch (e) {
    return formFailure(e, { username });
  }
  await signIn("credentials", { username, password, redirectTo: "/admin/license?welcome=1" });
  return { ok: true };
}

async function asAdmin<T extends FormState>(run: (actor: { username: string; ip: string }) => Promise<T>, values?: Record<string, string>): Promise<FormState> {
  const who = await adminActor();
  if ("error" in who) return { error: who.error };
  try {
    const result = await run({ username: who.user.username, ip: who.ip });
    revalidatePath("/admin", "layout");
    return result;
  } catch (e) {
    return formFailure(e, values);
  }
}

export async function createUserAction(_prev: FormState, form: FormData): Promise<FormState> {
  const values = { username: text(form, "username").toLowerCase(), displayName: text(form, "displayName"), role: text(form, "role") || "reviewer" };
  const password = String(form.get("password") ?? "");
  return asAdmin(async (actor) => {
    await createUser({ username: values.username, displayName: values.displayName || undefined, password, role: values.role === "admin" ? "admin" : "reviewer" }, actor);
    return { ok: true, message: `User ${values.username} created.` };
  }, values);
}

export async function userAction(_prev: FormState, form: FormData): Promise<FormState> {
  const id = text(form, "id");
  const op = text(form, "op");
  return asAdmin(async (actor) => {
    if (op === "disable") await disableUser(id, actor);
    else if (op === "enable") await enableUser(id, actor);
    else if (op === "delete") await deleteUser(id, actor);
    else if (op === "make-admin") await setRole(id, "admin", actor);
    else if (op === "make-reviewer") await setRole(id, "reviewer", actor);
    else if (op === "reset") {
      await resetPassword(id, String(form.get("password") ?? ""), actor);
      return { ok: true, message: "Password changed." };
    } else return { error: `unknown action ${JSON.stringify(op)}` };
    return { ok: true };
  });
}

export async function createTokenAction(_prev: FormState, form: FormData): Promise<FormState> {
  const values = { name: text(form, "name"), kind: text(form, "kind") || "bearer", quota: text(form, "quota") };
  if (!values.name) return { fieldErrors: { name: "Give the token a name that says who uses it." }, values };
  let monthlyQuota: number | undefined;
  if (values.kind === "access" && values.quota) {
    monthlyQuota = Number(values.quota);
    if (!Number.isInteger(monthlyQuota) || monthlyQuota < 1) return { fieldErrors: { quota: "The monthly quota must be a whole number of calls, at least 1 (or empty for none)." }, values };
  }
  return asAdmin(async (actor) => {
    const created = await createToken({ name: values.name, kind: values.kind as "bearer" | "access" | "apikey", monthlyQuota }, actor);
    return { ok: true, secret: created.token, message: `Token ${values.name} created.` };
  }, values);
}

export async function revokeTokenAction(_prev: FormState, form: FormData): Promise<FormState> {
  const id = text(form, "id");
  return asAdmin(async (actor) => {
    await revokeToken(id, actor);
    return { ok: true };
  });
}

export async function installLicenseAction(_prev: FormState, form: FormData): Promise<FormState> {
  const file = form.get("file");
  let document = text(form, "document");
  if (file && typeof file === "object" && "size" in file && file.size > 0) {
    if (file.size > 64 * 1024) return { fieldErrors: { file: "A licence file is a few hundred bytes; this file is too large to be one." } };
    document = (await file.text()).trim();
  }
  if (!document) return { fieldErrors: { document: "Paste the licence, or choose its file." } };
  return asAdmin(async (actor) => {
    const status = await installLicense(document, { actor: actor.username, ip: actor.ip });
    return { ok: true, message: `Licence for ${status.licensee} installed.` };
  }, { document });
}

export async function continueWithoutLicense(): Promise<void> {
  redirect("/admin");
}
