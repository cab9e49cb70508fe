/** Dates as people read them in the admin pages (UTC, to the minute). */
export function formatWhen(d: Date | string | null | undefined): string {
  if (!d) return "never";
  const date = typeof d === "string" ? new Date(d) : d;
  return date.toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

export function formatDay(d: Date | string | null | undefined): string {
  if (!d) return "—";
  return (typeof d === "string" ? new Date(d) : d).toISOString().slice(0, 10);
}
