import { redirect } from "next/navigation";
import { setupState } from "@/server/identity";
import { SetupForm } from "./setup-form";

export const dynamic = "force-dynamic";
export const metadata = { title: "Set up · Obscura" };

/** First run: create the first administrator. Once one exists, this page only points to /admin. */
export default async function SetupPage() {
  if (!(await setupState()).needsSetup) redirect("/admin");
  return (
    <main className="flex min-h-screen items-center justify-center px-4 py-12">
      <div className="w-full max-w-md space-y-6">
        <div>
          <p className="text-sm font-semibold text-brand-600">Step 1 of 2</p>
          <h1 className="mt-1 text-2xl font-bold tracking-tight">Welcome to Obscura</h1>
          <p className="mt-2 text-sm text-slate-600">
            Create the administrator account. Administrators manage users, API tokens and the licence; reviewers work on
            the videos they are given.
          </p>
        </div>
        <div className="rounded-xl bg-white p-6 shadow-sm ring-1 ring-slate-200">
          <SetupForm />
        </div>
      </div>
    </main>
  );
}
