import { health } from "@/server/health";
import { json } from "@/server/http/respond";

export const dynamic = "force-dynamic";

export async function GET() {
  const h = await health();
  return json(h, h.status === "ok" ? 200 : 503);
}
