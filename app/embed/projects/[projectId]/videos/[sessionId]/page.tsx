import { EditorClient } from "@/components/editor/editor-client";
import { EmbedError } from "../../../../embed-error";
import { pageGrant } from "../../../../grant";

export const dynamic = "force-dynamic";
// the token is in this page's URL: never send it on as a referrer
export const metadata = { title: "Obscura editor", referrer: "no-referrer" as const };

type Props = { params: Promise<{ projectId: string; sessionId: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

/** The editor inside another product's iframe, signed in by an embed token (docs/embedding.md). */
export default async function EmbedEditorPage({ params, searchParams }: Props) {
  const { projectId, sessionId } = await params;
  const g = await pageGrant((await searchParams).token, projectId, sessionId);
  if ("error" in g) return <EmbedError message={g.error} />;
  const back = g.grant.sessionId ? undefined : `/embed/projects/${encodeURIComponent(projectId)}?token=${encodeURIComponent(g.token)}`;
  return <EditorClient projectId={projectId} sessionId={sessionId} username={g.grant.user.username} embedToken={g.token} parentOrigin={g.grant.origin} backHref={back} />;
}
