"use server";
import { headers } from "next/headers";
import { ObscuraError } from "@/lib/errors";
import { changeOwnPassword } from "@/server/identity";
import { clientAddress } from "@/server/http/client-address";
import { currentUser } from "../_lib/session";

export interface PasswordState {
  ok?: boolean;
  error?: string;
  fieldErrors?: Record<string, string>;
}

export async function changePasswordAction(_prev: PasswordState, form: FormData): Promise<PasswordState> {
  const user = await currentUser();
  if (!user) return { error: "Your session has ended: sign in again." };
  const password = String(form.get("password") ?? "");
  if (password !== String(form.get("confirm") ?? "")) return { fieldErrors: { confirm: "The two passwords differ." } };
  try {
    await changeOwnPassword(user.id, String(form.get("current") ?? ""), password, clientAddress(await headers()));
    return { ok: true };
  } catch (e) {
    if (e instanceof ObscuraError) {
      const field = e.details[0]?.field;
      return field ? { fieldErrors: { [field]: e.details[0]!.problem ?? e.message } } : { error: e.message };
    }
    throw e;
  }
}
