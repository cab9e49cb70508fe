"use server";
import { AuthError } from "next-auth";
import { signIn } from "@/auth";

export interface SignInState {
  error?: string;
  username?: string;
}

const MESSAGES: Record<string, string> = {
  invalid: "Wrong username or password.",
  locked: "Too many failed attempts: this account is locked for a while. Try again later or ask an administrator.",
  throttled: "Too many failed sign-ins from your address: wait a few minutes and try again.",
};

export async function signInAction(_prev: SignInState, form: FormData): Promise<SignInState> {
  const username = String(form.get("username") ?? "").trim();
  const password = String(form.get("password") ?? "");
  const next = String(form.get("next") ?? "/");
  if (!username || !password) return { error: "Enter your username and password.", username };
  try {
    await signIn("credentials", { username, password, redirectTo: next.startsWith("/") && !next.startsWith("//") ? next : "/" });
  } catch (e) {
    if (e instanceof AuthError) {
      const code = (e as AuthError & { code?: string }).code ?? "invalid";
      return { error: MESSAGES[code] ?? MESSAGES.invalid, username };
    }
    throw e; // the redirect after a successful sign-in
  }
  return {};
}
