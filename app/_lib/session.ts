/**
 * Who is signed in, for pages and server actions. The JWT says who; the database says whether that
 * user may still come in (a disabled or deleted user is out at once, whatever the cookie says).
 */
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { auth } from "@/auth";
import { findActiveUser, type PublicUser } from "@/server/identity";
import { clientAddress } from "@/server/http/client-address";

export async function currentUser(): Promise<PublicUser | null> {
  const session = await auth();
  const id = (session?.user as { id?: string } | undefined)?.id;
  if (!id) return null;
  return findActiveUser(id);
}

/** The signed-in user, or a redirect to the sign-in page that comes back to `next`. */
export async function requireUser(next = "/"): Promise<PublicUser> {
  const user = await currentUser();
  if (!user) redirect(`/signin?next=${encodeURIComponent(next)}`);
  return user;
}

/** For server actions: the admin doing it (and their address for the audit log), or an error to show. */
export async function adminActor(): Promise<{ user: PublicUser; ip: string } | { error: string }> {
  const user = await currentUser();
  if (!user) return { error: "Your session has ended: sign in again." };
  if (user.role !== "admin") return { error: "Only administrators can do this." };
  return { user, ip: clientAddress(await headers()) };
}
