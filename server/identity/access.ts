/** Who may open which session: admins and API clients all; reviewers those whose `acl` names them. */
import type { Principal } from "../auth/bearer";

export function canSeeSession(principal: Pick<Principal, "role" | "name">, session: { acl?: readonly string[] | null }): boolean {
  if (principal.role !== "reviewer") return true;
  const me = principal.name.toLowerCase();
  return (session.acl ?? []).some((u) => u.toLowerCase() === me);
}
