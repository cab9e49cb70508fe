import { listAudit } from "@/server/identity";
import { Badge, Card, Table, Td } from "@/components/ui";
import { formatWhen } from "@/components/admin/format";

export const metadata = { title: "Audit log · Obscura admin" };

/** A readable line for an entry's details (never raw JSON for a person). */
function describe(details: unknown): string {
  if (!details || typeof details !== "object") return "";
  return Object.entries(details as Record<string, unknown>)
    .filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => `${k.replace(/([A-Z])/g, " $1").toLowerCase()}: ${Array.isArray(v) ? v.join(", ") : String(v)}`)
    .join(" · ");
}

export default async function AuditPage() {
  const entries = await listAudit({ limit: 200 });
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-bold tracking-tight">Audit log</h1>
        <p className="mt-1 text-sm text-slate-500">Sign-ins and every change made in this console, newest first (the last 200).</p>
      </div>
      <Card>
        <Table head={["When", "Who", "What", "On", "From", "Details"]} empty="Nothing recorded yet.">
          {entries.map((a) => (
            <tr key={a.id}>
              <Td className="whitespace-nowrap text-slate-500">{formatWhen(a.at)}</Td>
              <Td>{a.actor ?? "system"}</Td>
              <Td>
                <Badge color={a.action.includes("failure") || a.action.includes("locked") ? "red" : a.action.startsWith("sign-in") ? "green" : "gray"}>{a.action}</Badge>
              </Td>
              <Td>{a.target ?? ""}</Td>
              <Td className="text-slate-500">{a.ip ?? ""}</Td>
              <Td className="text-slate-500">{describe(a.details)}</Td>
            </tr>
          ))}
        </Table>
      </Card>
    </div>
  );
}
