/**
 * The editor's calls to the session API (docs/sessions.md). Signed in, the cookie authenticates;
 * embedded (docs/embedding.md), the embed token goes as `Authorization: Bearer` on every call and
 * as `embed_token` in the URLs the browser loads itself (video, thumbnails, download).
 */
import type { Track } from "@/lib/editor/model";
import type { SessionSummary } from "@/server/sessions";
import type { ExportStatus } from "@/server/sessions/export";

/** A session as GET .../sessions/{sessionId} answers it (server/sessions). */
export type SessionData = SessionSummary & { tracks: Track[]; frame: { width: number; height: number; fps: number; frameCount: number } | null };
export type { ExportStatus };

export interface FollowResult {
  firstFrame: number;
  lastFrame: number;
  keyframes: Track["keyframes"];
  stopped: { forward?: string; backward?: string };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class SessionApi {
  readonly base: string;
  constructor(
    readonly projectId: string,
    readonly sessionId: string,
    private readonly token?: string,
  ) {
    this.base = `/api/v1/projects/${encodeURIComponent(projectId)}/sessions/${encodeURIComponent(sessionId)}`;
  }

  /** A URL the browser fetches by itself (no headers): the embed token rides along as a query parameter. */
  url(pathAndQuery: string): string {
    const u = this.base + pathAndQuery;
    return this.token ? `${u}${u.includes("?") ? "&" : "?"}embed_token=${encodeURIComponent(this.token)}` : u;
  }

  private async call<T>(method: string, pathAndQuery: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const r = await fetch(this.base + pathAndQuery, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
    const text = await r.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    if (!r.ok) {
      const msg = (parsed as { error?: { message?: string } } | null)?.error?.message ?? `${r.status} ${r.statusText}`;
      throw new ApiError(r.status, msg);
    }
    return parsed as T;
  }

  session = () => this.call<SessionData>("GET", "");
  save = (version: number, tracks: Track[]) => this.call<{ version: number; editedAt: string }>("PUT", "/tracks", { version, tracks });
  follow = (frame: number, box: Track["keyframes"][number]["box"], maxFrames = 300) => this.call<FollowResult>("POST", "/tracks:follow", { frame, box, direction: "both", maxFrames });
  startExport = (renderConfig: Record<string, unknown>) => this.call<{ name: string }>("POST", "/export", { renderConfig });
  exportStatus = () => this.call<ExportStatus>("GET", "/export");
}
