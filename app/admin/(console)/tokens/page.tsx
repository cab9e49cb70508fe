import { listTokens } from "@/server/identity";
import { Badge, Card, Table, Td } from "@/components/ui";
import { formatWhen } from "@/components/admin/format";
import { CreateTokenForm, RevokeTokenButton } from "./token-forms";

export const metadata = { title: "API tokens · Obscura admin" };

const KINDS = {
  bearer: { label: "Bearer", where: "Authorization: Bearer … on /api/v1 (redaction API)" },
  access: { label: "Access token", where: "X-Access-Token on /v1/detections, with a monthly quota" },
  apikey: { label: "API key", where: "X-API-Key on the vehicle and sensor data APIs" },
} as const;

export default async function TokensPage() {
  const tokens = await listTokens();
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-bold tracking-tight">API tokens</h1>
        <p className="mt-1 text-sm text-slate-500">
          Programs use tokens to call the APIs. A token is shown once when it is created and stored only as a hash; revoking one takes effect at once.
        </p>
      </div>
      <Card>
        <Table head={["Name", "Kind", "Token", "Created", "Last used", "This month", ""]} empty="No tokens yet.">
          {tokens.map((t) => (
            <tr key={t.id} data-token={t.name} className={t.revokedAt ? "opacity-60" : undefined}>
              <Td className="font-medium text-slate-900">{t.name}</Td>
              <Td>
                <Badge color="blue">{KINDS[t.kind].label}</Badge>
              </Td>
              <Td>
                <code className="text-xs text-slate-500">{t.prefix}…</code>
              </Td>
              <Td className="text-slate-500">{formatWhen(t.createdAt)}</Td>
              <Td className="text-slate-500">{formatWhen(t.lastUsedAt)}</Td>
              <Td className="text-slate-500">
                {t.kind === "access" ? `${t.callsThisMonth}${t.monthlyQuota ? ` / ${t.monthlyQuota}` : ""} calls` : "—"}
              </Td>
              <Td className="text-right">{t.revokedAt ? <Badge color="red">revoked {formatWhen(t.revokedAt)}</Badge> : <RevokeTokenButton id={t.id} name={t.name} />}</Td>
            </tr>
          ))}
        </Table>
      </Card>
      <Card title="Create a token">
        <CreateTokenForm kinds={Object.entries(KINDS).map(([value, k]) => ({ value, label: k.label, where: k.where }))} />
      </Card>
    </div>
  );
}
