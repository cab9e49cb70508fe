/**
 * People and credentials (docs/admin.md): users and roles (users.ts), passwords (passwords.ts),
 * sign-in with lockout and throttling (sign-in.ts), first run, headless bootstrap and the session
 * secret (setup.ts), API tokens and quotas (tokens.ts), the audit log (audit.ts), session access
 * (access.ts). Pages and routes call these; the request-level checks live in server/auth/bearer.ts.
 */
export { audit, listAudit, type Actor, type AuditEntry } from "./audit";
export { assertPassword, hashPassword, normaliseUsername, passwordProblem, USERNAME_RULE } from "./passwords";
export {
  adminExists,
  changeOwnPassword,
  createUser,
  deleteUser,
  disableUser,
  enableUser,
  findActiveUser,
  listUsers,
  resetPassword,
  setRole,
  type NewUser,
  type PublicUser,
  type Role,
  type SeatLimit,
} from "./users";
export { signInPolicy, verifyCredentials, type SignInPolicy, type SignInResult } from "./sign-in";
export { authSecret, bootstrapFromEnv, completeSetup, setupState } from "./setup";
export { authenticateToken, countCall, createToken, listTokens, monthOf, revokeToken, TOKEN_KINDS, tokenDigest, type TokenInfo, type TokenKind } from "./tokens";
export { canSeeSession } from "./access";
