import { redirect } from "next/navigation";
import { setupState } from "@/server/identity";
import { currentUser } from "../_lib/session";
import { SignInForm } from "./sign-in-form";

export const dynamic = "force-dynamic";
export const metadata = { title: "Sign in · Obscura" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  const { next } = await searchParams;
  if ((await setupState()).needsSetup) redirect("/admin/setup");
  const safeNext = next && next.startsWith("/") && !next.startsWith("//") ? next : "/";
  if (await currentUser()) redirect(safeNext);
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm space-y-6">
        <div className="text-center">
          <p className="text-2xl font-bold tracking-tight text-slate-900">Obscura</p>
          <p className="mt-1 text-sm text-slate-500">Sign in to review and redact</p>
        </div>
        <div className="rounded-xl bg-white p-6 shadow-sm ring-1 ring-slate-200">
          <SignInForm next={safeNext} />
        </div>
      </div>
    </main>
  );
}
