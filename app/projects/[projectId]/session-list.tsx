"use client";
import { useEffect, useState } from "react";
import { Badge } from "@/components/ui";
import type { SessionSummary } from "@/server/sessions";

const LABELS: Record<string, string> = { face: "faces", head: "heads", person: "people", vehicle: "vehicles", licensePlate: "plates", id: "IDs", screen: "screens", document: "documents" };

const duration = (s: number | null | undefined) => (s == null ? "" : `${Math.floor(s / 60)}:${String(Math.round(s % 60)).padStart(2, "0")}`);

/** The cards, refreshed every 2 s while an operation runs. */
export function SessionList({ projectId, initial, embedToken }: { projectId: string; initial: SessionSummary[]; embedToken?: string }) {
  // embedded (docs/embedding.md): links stay inside /embed, and the token authenticates the calls
  const q = embedToken ? `?token=${encodeURIComponent(embedToken)}` : "";
  const editorHref = (id: string) => `${embedToken ? "/embed" : ""}/projects/${encodeURIComponent(projectId)}/videos/${id}${q}`;
  const posterSrc = (id: string) => `/api/v1/projects/${encodeURIComponent(projectId)}/sessions/${id}/poster${embedToken ? `?embed_token=${encodeURIComponent(embedToken)}` : ""}`;
  const [sessions, setSessions] = useState(initial);
  useEffect(() => setSessions(initial), [initial]); // a refresh from the server (a new upload)
  const running = sessions.some((s) => s.operation && !s.operation.done);
  useEffect(() => {
    if (!running) return;
    const t = setInterval(async () => {
      const r = await fetch(`/api/v1/projects/${encodeURIComponent(projectId)}/sessions`, embedToken ? { headers: { authorization: `Bearer ${embedToken}` } } : undefined);
      if (r.ok) setSessions(((await r.json()) as { sessions: SessionSummary[] }).sessions);
    }, 2000);
    return () => clearInterval(t);
  }, [projectId, running, embedToken]);
  if (!sessions.length) {
    return <p className="rounded-xl bg-white px-6 py-12 text-center text-sm text-slate-500 ring-1 ring-slate-200">No videos here yet.</p>;
  }
  return (
    <ul className="grid gap-5 sm:grid-cols-2 lg:grid-cols-3">
      {sessions.map((s) => {
        const op = s.operation;
        // a new video has no session yet while its first operation runs: nothing to open or show
        const ready = s.media != null;
        return (
          <li key={s.sessionId} data-session={s.sessionId} className="overflow-hidden rounded-xl bg-white shadow-sm ring-1 ring-slate-200">
            <a href={ready ? editorHref(s.sessionId) : undefined} className="group relative block aspect-video bg-slate-900" aria-label={ready ? `Open ${s.name} in the editor` : `${s.name} is being processed`}>
              {/* eslint-disable-next-line @next/next/no-img-element */}
              {ready ? <img src={posterSrc(s.sessionId)} alt="" className="h-full w-full object-contain" /> : <span className="flex h-full items-center justify-center text-sm text-slate-400">processing…</span>}
              {s.media?.durationSeconds != null && <span className="absolute right-2 bottom-2 rounded bg-black/70 px-1.5 py-0.5 text-xs font-medium text-white">{duration(s.media.durationSeconds)}</span>}
              {ready && <span className="absolute inset-0 flex items-center justify-center bg-black/40 text-sm font-semibold text-white opacity-0 transition group-hover:opacity-100">Open in editor</span>}
            </a>
            <div className="space-y-2 px-4 py-3">
              <a href={ready ? editorHref(s.sessionId) : undefined} className="block truncate font-medium text-slate-900 hover:underline" title={s.name} data-open-editor>
                {s.name}
              </a>
              {op && !op.done ? (
                <div>
                  <div className="h-1.5 overflow-hidden rounded bg-slate-100">
                    <div className="h-full bg-brand-600 transition-all" style={{ width: `${op.progressPercent}%` }} />
                  </div>
                  <p className="mt-1 text-xs text-slate-500">Processing… {Math.round(op.progressPercent)}%</p>
                </div>
              ) : op?.status === "failed" ? (
                <Badge color="red">processing failed</Badge>
              ) : (
                <div className="flex flex-wrap gap-1.5">
                  {Object.entries(s.trackCounts).map(([type, n]) => (
                    <Badge key={type} color="blue">
                      {n} {LABELS[type] ?? type}
                    </Badge>
                  ))}
                  {Object.keys(s.trackCounts).length === 0 && <Badge>nothing detected</Badge>}
                </div>
              )}
              <p className="text-xs text-slate-500">{s.editedAt ? `Last edit ${s.editedAt.slice(0, 16).replace("T", " ")} UTC by ${s.editedBy}` : "Not edited yet"}</p>
            </div>
          </li>
        );
      })}
    </ul>
  );
}
