import { listSessions } from "@/server/sessions";
import { embedPrincipal } from "@/server/embed/tokens";
import { SessionList } from "../../../projects/[projectId]/session-list";
import { EmbedError } from "../../embed-error";
import { pageGrant } from "../../grant";

export const dynamic = "force-dynamic";
export const metadata = { title: "Obscura", referrer: "no-referrer" as const };

type Props = { params: Promise<{ projectId: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

/** A project's videos inside another product's iframe, signed in by an embed token (docs/embedding.md). */
export default async function EmbedProjectPage({ params, searchParams }: Props) {
  const { projectId } = await params;
  const g = await pageGrant((await searchParams).token, projectId);
  if ("error" in g) return <EmbedError message={g.error} />;
  const sessions = await listSessions(projectId, embedPrincipal(g.grant));
  return (
    <main className="mx-auto max-w-6xl space-y-4 px-6 py-6">
      <h1 className="text-xl font-bold tracking-tight">{projectId}</h1>
      <SessionList projectId={projectId} initial={sessions} embedToken={g.token} />
    </main>
  );
}
