/**
 * Sign-in for people (Auth.js v5, credentials provider, JWT sessions; docs/admin.md).
 *
 * - The signing secret comes from server/identity (AUTH_SECRET, else one shared secret kept in the
 *   database, so every web node of a scale-out accepts the same sessions): the config is built
 *   lazily per request.
 * - `authorize` checks the password with server/identity (argon2id, lockout, per-address
 *   throttling, audit log). Failures reach the sign-in form as a reason code only ("invalid",
 *   "locked", "throttled"); which part was wrong is never told.
 * - The JWT carries the user's id, username and role; pages re-check the user in the database on
 *   every request (requireUser), so a disabled or deleted user is out at once.
 * - Cookies: HTTP-only, SameSite=Lax, `Secure` (and `__Secure-` names) when the site is served
 *   over https (set AUTH_URL=https://... behind a TLS proxy).
 */
import NextAuth, { CredentialsSignin } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { authSecret, verifyCredentials } from "@/server/identity";
import { clientAddress } from "@/server/http/client-address";
import { log } from "@/server/log";

export class SignInRefused extends CredentialsSignin {
  constructor(code: string) {
    super();
    this.code = code;
  }
}

/** Eight hours: a working day; signing in again afterwards. */
export const SESSION_MAX_AGE_SECONDS = 8 * 3600;

export const { handlers, auth, signIn, signOut } = NextAuth(async () => ({
  secret: await authSecret(),
  trustHost: true,
  session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
  pages: { signIn: "/signin" },
  logger: {
    error: (e: Error) => log.warn("auth error", { name: e.name, type: (e as { type?: string }).type }),
    warn: (code: string) => log.warn("auth warning", { code }),
    debug: () => {},
  },
  providers: [
    Credentials({
      credentials: { username: { label: "Username" }, password: { label: "Password", type: "password" } },
      async authorize(credentials, request) {
        const username = typeof credentials?.username === "string" ? credentials.username : "";
        const password = typeof credentials?.password === "string" ? credentials.password : "";
        const result = await verifyCredentials(username, password, { ip: clientAddress(request.headers) });
        if (!result.ok) throw new SignInRefused(result.reason);
        return { id: result.user.id, name: result.user.displayName ?? result.user.username, username: result.user.username, role: result.user.role };
      },
    }),
  ],
  callbacks: {
    jwt({ token, user }) {
      if (user) {
        const u = user as { id: string; username: string; role: string };
        token.uid = u.id;
        token.username = u.username;
        token.role = u.role;
      }
      return token;
    },
    session({ session, token }) {
      return { ...session, user: { ...session.user, id: String(token.uid ?? ""), username: String(token.username ?? ""), role: String(token.role ?? "") } };
    },
  },
}));
