"use server";
import { headers } from "next/headers";
import { changeOwnPassword } from "@/server/identity";
import { clientAddress } from "@/server/http/client-address";
import { currentUser } from "../_lib/session";
import { formFailure, type FormState } from "../_lib/form-state";

export type PasswordState = FormState;

export async function changePasswordAction(_prev: PasswordState, form: FormData): Promise<PasswordState> {
  const user = await currentUser();
  if (!user) return { error: "Your session has ended: sign in again." };
  const password = String(form.get("password") ?? "");
  if (password !== String(form.get("confirm") ?? "")) return { fieldErrors: { confirm: "The two passwords differ." } };
  try {
    await changeOwnPassword(user.id, String(form.get("current") ?? ""), password, clientAddress(await headers()));
    return { ok: true };
  } catch (e) {
    return formFailure(e);
  }
}
