/** /healthz: is the database reachable. No secrets, no auth. */
import { sql } from "drizzle-orm";
import { runtime } from "./db/client";

export async function health(): Promise<{ status: "ok" | "unavailable"; database: string }> {
  try {
    const rt = await runtime();
    await rt.db.execute(sql`select 1`);
    return { status: "ok", database: rt.kind };
  } catch {
    return { status: "unavailable", database: "unreachable" };
  }
}
