import { requireUser } from "../../../../_lib/session";
import { EditorClient } from "@/components/editor/editor-client";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ projectId: string }> }) {
  return { title: `Editor · ${(await params).projectId} · Obscura` };
}

/** The review editor for one video (access is checked by the session API the editor loads from). */
export default async function EditorPage({ params }: { params: Promise<{ projectId: string; sessionId: string }> }) {
  const { projectId, sessionId } = await params;
  const user = await requireUser(`/projects/${projectId}/videos/${sessionId}`);
  return <EditorClient projectId={projectId} sessionId={sessionId} username={user.username} backHref={`/projects/${encodeURIComponent(projectId)}`} />;
}
