import { Badge } from "@/components/ui";
import type { LicenseStatus } from "@/server/license";
import { formatDay } from "./format";

export function LicenseSummary({ status }: { status: LicenseStatus }) {
  if (status.state === "evaluation") {
    return (
      <div className="space-y-1">
        <Badge color="amber">Evaluation</Badge>
        <p className="text-sm text-slate-600">All features, {status.seats} seats. No licence installed.</p>
      </div>
    );
  }
  const days = status.daysLeft ?? 0;
  return (
    <div className="space-y-1">
      <p className="font-medium">{status.licensee}</p>
      {status.state === "expired" ? (
        <Badge color="red">Expired {formatDay(status.expiresAt)}</Badge>
      ) : (
        <Badge color={days <= 30 ? "amber" : "green"}>
          {days} day{days === 1 ? "" : "s"} left
        </Badge>
      )}
      <p className="text-sm text-slate-600">
        {status.seats} seats · {status.features.join(", ")} · until {formatDay(status.expiresAt)}
      </p>
    </div>
  );
}
