import Link from "next/link";
import { Card } from "@/components/ui";
import { requireUser } from "../_lib/session";
import { PasswordForm } from "./password-form";

export const dynamic = "force-dynamic";
export const metadata = { title: "Your account · Obscura" };

export default async function AccountPage() {
  const user = await requireUser("/account");
  return (
    <main className="mx-auto max-w-xl space-y-6 px-6 py-12">
      <div>
        <Link href="/" className="text-sm font-medium text-brand-600 hover:underline">
          ← Obscura
        </Link>
        <h1 className="mt-2 text-2xl font-bold tracking-tight">Your account</h1>
        <p className="mt-1 text-sm text-slate-500">
          Signed in as <strong>{user.username}</strong> ({user.role}).
        </p>
      </div>
      <Card title="Change your password">
        <PasswordForm />
      </Card>
    </main>
  );
}
