import Link from "next/link";
import { redirect } from "next/navigation";
import { setupState } from "@/server/identity";
import { listProjects } from "@/server/sessions";
import { Card } from "@/components/ui";
import { config } from "@/server/config";
import { currentUser } from "./_lib/session";
import { FirstUpload } from "./first-upload";
import { signOutAction } from "./_lib/sign-out";

export const dynamic = "force-dynamic";

export default async function Home() {
  if ((await setupState()).needsSetup) redirect("/admin/setup");
  const user = await currentUser();
  const projects = user ? await listProjects({ kind: "user", id: user.id, name: user.username, role: user.role }) : null;
  return (
    <main className="mx-auto max-w-3xl space-y-6 px-6 py-12">
      <div className="flex items-center justify-between">
        <h1 className="text-3xl font-bold tracking-tight">Obscura</h1>
        {user ? (
          <form action={signOutAction} className="text-sm text-slate-600">
            Signed in as{" "}
            <Link href="/account" className="font-semibold hover:underline">
              {user.displayName ?? user.username}
            </Link>{" "}
            <button className="ml-2 font-medium text-brand-600 hover:underline">Sign out</button>
          </form>
        ) : (
          <Link href="/signin" className="rounded-md bg-brand-600 px-3.5 py-2 text-sm font-semibold text-white hover:bg-brand-700">
            Sign in
          </Link>
        )}
      </div>
      <p className="text-slate-600">Self-hosted redaction and video analytics: find faces, people, vehicles, plates, IDs, screens and documents in video and images, review what was found, and export redacted copies.</p>
      {projects && (
        <Card title="Your projects">
          {projects.length ? (
            <ul className="divide-y divide-slate-100">
              {projects.map((p) => (
                <li key={p.projectId} className="flex items-center justify-between py-2">
                  <a className="font-medium text-brand-600 hover:underline" href={`/projects/${encodeURIComponent(p.projectId)}`}>
                    {p.projectId}
                  </a>
                  <span className="text-sm text-slate-500">
                    {p.sessions} video{p.sessions === 1 ? "" : "s"}
                  </span>
                </li>
              ))}
            </ul>
          ) : (
            <p className="text-sm text-slate-500">No videos shared with you yet: upload your first one below.</p>
          )}
        </Card>
      )}
      {projects && projects.length === 0 && (
        <div className="space-y-2">
          <h2 className="text-lg font-semibold">Upload videos or images</h2>
          <FirstUpload defaultProjectId={config().defaultProjectId} />
        </div>
      )}
      <div className="grid gap-4 md:grid-cols-2">
        {user?.role === "admin" && (
          <Card title={<Link href="/admin" className="hover:underline">Admin console</Link>}>
            <p className="text-sm text-slate-600">Users, API tokens, the licence and the audit log.</p>
          </Card>
        )}
        <Card title={<Link href="/docs/api" className="hover:underline">API reference</Link>}>
          <p className="text-sm text-slate-600">
            The redaction API under <code>/api/v1</code> (OpenAPI 3.1 at <a className="text-brand-600 hover:underline" href="/openapi.json">/openapi.json</a>).
          </p>
        </Card>
      </div>
    </main>
  );
}
