import Link from "next/link";
import { listSessions } from "@/server/sessions";
import { requireUser } from "../../_lib/session";
import { signOutAction } from "../../_lib/sign-out";
import { SessionList } from "./session-list";
import { ProjectUploads } from "./project-uploads";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ projectId: string }> }) {
  return { title: `${(await params).projectId} · Obscura` };
}

/** A project's videos the signed-in user may see, with live progress (the editor opens from here). */
export default async function ProjectPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const user = await requireUser(`/projects/${projectId}`);
  const sessions = await listSessions(projectId, { kind: "user", id: user.id, name: user.username, role: user.role });
  return (
    <>
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex max-w-6xl items-center justify-between px-6 py-3">
          <div className="flex items-center gap-3">
            <Link href="/" className="text-lg font-bold tracking-tight">
              Obscura
            </Link>
            <span className="text-slate-300">/</span>
            <span className="font-medium text-slate-700">{projectId}</span>
          </div>
          <form action={signOutAction} className="flex items-center gap-3 text-sm text-slate-600">
            <Link href="/account" className="hover:underline">
              {user.displayName ?? user.username}
            </Link>
            {user.role === "admin" && (
              <Link href="/admin" className="hover:underline">
                Admin
              </Link>
            )}
            <button className="font-medium text-brand-600 hover:underline">Sign out</button>
          </form>
        </div>
      </header>
      <main className="mx-auto max-w-6xl space-y-6 px-6 py-8">
        <div>
          <h1 className="text-2xl font-bold tracking-tight">Videos</h1>
          <p className="mt-1 text-sm text-slate-500">
            {user.role === "admin" ? "Every video of this project." : "The videos of this project shared with you."}
          </p>
        </div>
        <ProjectUploads projectId={projectId} />
        <SessionList projectId={projectId} initial={sessions} />
      </main>
    </>
  );
}
