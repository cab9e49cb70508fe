import type { ReactNode } from "react";
import Link from "next/link";
import { redirect } from "next/navigation";
import { setupState } from "@/server/identity";
import { licenseStatus } from "@/server/license";
import { AdminNav } from "@/components/admin/nav";
import { Alert, Button, Card } from "@/components/ui";
import { requireUser } from "../../_lib/session";
import { signOutAction } from "../../_lib/sign-out";

export const dynamic = "force-dynamic";

export default async function AdminLayout({ children }: { children: ReactNode }) {
  if ((await setupState()).needsSetup) redirect("/admin/setup");
  const user = await requireUser("/admin");
  const header = (
    <header className="border-b border-slate-200 bg-white">
      <div className="mx-auto flex max-w-6xl items-center justify-between gap-6 px-6 py-3">
        <div className="flex items-center gap-6">
          <Link href="/" className="text-lg font-bold tracking-tight">
            Obscura <span className="font-normal text-slate-400">admin</span>
          </Link>
          {user.role === "admin" && <AdminNav />}
        </div>
        <form action={signOutAction} className="flex items-center gap-3 text-sm text-slate-600">
          <Link href="/account" className="hover:text-slate-900 hover:underline">
            {user.displayName ?? user.username} <span className="text-slate-400">({user.role})</span>
          </Link>
          <Button type="submit" variant="secondary">
            Sign out
          </Button>
        </form>
      </div>
    </header>
  );
  if (user.role !== "admin") {
    return (
      <>
        {header}
        <main className="mx-auto max-w-2xl px-6 py-12">
          <Card title="Administrators only">
            <Alert tone="error" title="You cannot open the admin console">
              Your account is a reviewer account. Ask an administrator if you need users, tokens or the licence changed.
            </Alert>
            <p className="mt-4 text-sm">
              <Link className="font-medium text-brand-600 hover:underline" href="/">
                Back to your videos
              </Link>
            </p>
          </Card>
        </main>
      </>
    );
  }
  const license = await licenseStatus();
  return (
    <>
      {header}
      <main className="mx-auto max-w-6xl space-y-6 px-6 py-8">
        {license.state === "evaluation" && (
          <Alert tone="warning" title="Evaluation mode">
            {license.notice}{" "}
            <Link href="/admin/license" className="font-semibold underline">
              Add a licence
            </Link>
          </Alert>
        )}
        {license.state === "expired" && (
          <Alert tone="error" title="The licence has expired">
            {license.reason ?? "New processing is refused until a renewed licence is installed; reading and editing still work."}{" "}
            <Link href="/admin/license" className="font-semibold underline">
              Install a renewed licence
            </Link>
          </Alert>
        )}
        {children}
      </main>
    </>
  );
}
