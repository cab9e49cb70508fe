import Link from "next/link";
import { listAudit, listTokens, listUsers } from "@/server/identity";
import { licenseStatus } from "@/server/license";
import { Badge, Card } from "@/components/ui";
import { LicenseSummary } from "@/components/admin/license-summary";
import { formatWhen } from "@/components/admin/format";

export const metadata = { title: "Admin · Obscura" };

export default async function AdminOverview() {
  const [license, users, tokens, audit] = await Promise.all([licenseStatus(), listUsers(), listTokens(), listAudit({ limit: 8 })]);
  const active = users.filter((u) => u.status === "active");
  return (
    <div className="space-y-6">
      <h1 className="text-2xl font-bold tracking-tight">Overview</h1>
      <div className="grid gap-6 md:grid-cols-3">
        <Card title="Licence" actions={<Link className="text-sm font-medium text-brand-600 hover:underline" href="/admin/license">Manage</Link>}>
          <LicenseSummary status={license} />
        </Card>
        <Card title="Users" actions={<Link className="text-sm font-medium text-brand-600 hover:underline" href="/admin/users">Manage</Link>}>
          <p className="text-3xl font-semibold">{active.length}</p>
          <p className="text-sm text-slate-500">
            active of {license.seats} seat{license.seats === 1 ? "" : "s"} · {active.filter((u) => u.role === "admin").length} admin
          </p>
        </Card>
        <Card title="API tokens" actions={<Link className="text-sm font-medium text-brand-600 hover:underline" href="/admin/tokens">Manage</Link>}>
          <p className="text-3xl font-semibold">{tokens.filter((t) => !t.revokedAt).length}</p>
          <p className="text-sm text-slate-500">in use · {tokens.filter((t) => t.revokedAt).length} revoked</p>
        </Card>
      </div>
      <Card title="Recent activity" actions={<Link className="text-sm font-medium text-brand-600 hover:underline" href="/admin/audit">Full audit log</Link>}>
        <ul className="divide-y divide-slate-100 text-sm">
          {audit.map((a) => (
            <li key={a.id} className="flex items-center justify-between gap-4 py-2">
              <span>
                <Badge color={a.action.includes("failure") ? "red" : "gray"}>{a.action}</Badge> <span className="ml-2 text-slate-700">{a.actor ?? "system"}</span>
                {a.target && <span className="text-slate-500"> → {a.target}</span>}
              </span>
              <time className="text-slate-400" dateTime={a.at.toISOString()}>{formatWhen(a.at)}</time>
            </li>
          ))}
          {audit.length === 0 && <li className="py-2 text-slate-500">Nothing yet.</li>}
        </ul>
      </Card>
    </div>
  );
}
