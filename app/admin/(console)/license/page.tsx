import Link from "next/link";
import { licenseStatus } from "@/server/license";
import { Card } from "@/components/ui";
import { LicenseSummary } from "@/components/admin/license-summary";
import { LicenseForm } from "./license-form";

export const metadata = { title: "Licence · Obscura admin" };

export default async function LicensePage({ searchParams }: { searchParams: Promise<{ welcome?: string }> }) {
  const [{ welcome }, status] = await Promise.all([searchParams, licenseStatus()]);
  return (
    <div className="space-y-6">
      {welcome && (
        <div>
          <p className="text-sm font-semibold text-brand-600">Step 2 of 2</p>
          <h1 className="mt-1 text-2xl font-bold tracking-tight">Add your licence</h1>
          <p className="mt-2 text-sm text-slate-600">
            Upload the licence file you received or paste it below. Without one, Obscura runs in evaluation mode: every feature, {status.seats} seats.{" "}
            <Link href="/admin" className="font-semibold text-brand-600 hover:underline">
              Continue without a licence
            </Link>
          </p>
        </div>
      )}
      {!welcome && <h1 className="text-2xl font-bold tracking-tight">Licence</h1>}
      <div className="grid gap-6 md:grid-cols-3">
        <Card title="Current licence">
          <LicenseSummary status={status} />
        </Card>
        <Card title="Install a licence" className="md:col-span-2" description="A new licence replaces the current one. It is checked before it is installed.">
          <LicenseForm />
        </Card>
      </div>
    </div>
  );
}
