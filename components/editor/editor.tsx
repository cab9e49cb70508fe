"use client";
/**
 * The review editor (docs/editor.md): one video of a project, its tracks over the video, the
 * timeline and the track list; every edit is undoable; Save writes the tracks with a version check;
 * Export renders them through the same MEDIA_RENDER job the API uses. Embedded in another product
 * (docs/embedding.md), it authenticates with the embed token and posts events to the parent window.
 */
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import { QueryClient, QueryClientProvider, useQuery } from "@tanstack/react-query";
import "video.js/dist/video-js.css";
import { OBJECT_TYPES } from "@/lib/api/session";
import {
  boxAt,
  bulkDecide,
  commit,
  drawnTrack,
  history,
  mergeTracks,
  neighbourKeyframe,
  nextId,
  nextToReview,
  redo,
  setKeyframe,
  setSpan,
  splitTrack,
  trackScore,
  undo,
  type Box,
  type DrawMode,
  type History,
  type Track,
} from "@/lib/editor/model";
import { ApiError, SessionApi, type ExportStatus, type SessionData } from "./api";
import { CLASS_COLORS, CLASS_LABELS, MANUAL_COLOR } from "./colors";
import { Timeline } from "./timeline";
import { TrackList } from "./track-list";
import { VideoStage, type PreviewStyle, type VideoStageHandle } from "./video-stage";
import { ShortcutsHelp } from "./shortcuts";

export interface EditorProps {
  projectId: string;
  sessionId: string;
  /** Embedded: the embed token (sent as Bearer and as embed_token in media URLs). */
  embedToken?: string;
  /** Embedded: the parent window's origin, the only target of postMessage events. */
  parentOrigin?: string;
  /** Where "back" goes (the project view); none when embedded in a single-video frame. */
  backHref?: string;
  username: string;
}

type ObscuraEvent = "ready" | "saved" | "exportStarted" | "exportDone";

export function Editor(props: EditorProps) {
  const [client] = useState(() => new QueryClient({ defaultOptions: { queries: { refetchOnWindowFocus: false, retry: (n, e) => n < 2 && !(e instanceof ApiError && e.status >= 400 && e.status < 500) } } }));
  return (
    <QueryClientProvider client={client}>
      <EditorLoader {...props} />
    </QueryClientProvider>
  );
}

function EditorLoader(props: EditorProps) {
  const api = useMemo(() => new SessionApi(props.projectId, props.sessionId, props.embedToken), [props.projectId, props.sessionId, props.embedToken]);
  const [loadKey, setLoadKey] = useState(0);
  const q = useQuery({
    queryKey: ["session", props.projectId, props.sessionId, loadKey],
    queryFn: () => api.session(),
    refetchInterval: (query) => {
      const d = query.state.data as SessionData | undefined;
      return d && (!d.frame || (d.operation && !d.operation.done)) ? 2000 : false;
    },
  });
  if (q.error) {
    const e = q.error as ApiError;
    return (
      <Centered>
        <p className="text-lg font-semibold text-white">{e.status === 403 ? "You do not have access to this video" : e.status === 404 ? "No such video" : "The video could not be loaded"}</p>
        <p className="mt-2 max-w-lg text-sm text-slate-400" role="alert">
          {e.message}
        </p>
      </Centered>
    );
  }
  const d = q.data;
  if (!d) return <Centered>Loading…</Centered>;
  if (!d.frame || (d.operation && !d.operation.done && d.version === 0)) {
    return (
      <Centered>
        <p className="text-lg font-semibold text-white">{d.name} is being processed</p>
        <div className="mt-4 h-2 w-72 overflow-hidden rounded bg-slate-700">
          <div className="h-full bg-brand-500 transition-all" style={{ width: `${d.operation?.progressPercent ?? 0}%` }} />
        </div>
        <p className="mt-2 text-sm text-slate-400">{Math.round(d.operation?.progressPercent ?? 0)}% — the editor opens when detection is done.</p>
      </Centered>
    );
  }
  return <EditorView key={`${d.sessionId}:${loadKey}`} {...props} api={api} data={d} frameInfo={d.frame} onReload={() => setLoadKey((k) => k + 1)} />;
}

function Centered({ children }: { children: React.ReactNode }) {
  return <div className="flex min-h-[60vh] flex-col items-center justify-center px-6 text-center text-slate-300">{children}</div>;
}

// ---- state -------------------------------------------------------------------------------------

interface State {
  h: History<Track[]>;
  selectedId: number | null;
  version: number;
  saved: Track[];
}

type Action =
  | { type: "edit"; tracks: Track[]; select?: number | null }
  | { type: "live"; tracks: Track[] }
  | { type: "undo" }
  | { type: "redo" }
  | { type: "select"; id: number | null }
  | { type: "saved"; version: number; tracks: Track[] };

function reducer(s: State, a: Action): State {
  switch (a.type) {
    case "edit":
      return { ...s, h: commit(s.h, a.tracks), selectedId: a.select === undefined ? s.selectedId : a.select };
    case "live":
      return { ...s, h: { ...s.h, present: a.tracks } };
    case "undo":
      return { ...s, h: undo(s.h) };
    case "redo":
      return { ...s, h: redo(s.h) };
    case "select":
      return { ...s, selectedId: a.id };
    case "saved":
      return { ...s, version: a.version, saved: a.tracks };
  }
}

const replaceTrack = (tracks: Track[], t: Track) => tracks.map((x) => (x.id === t.id ? t : x));

// ---- the editor --------------------------------------------------------------------------------

interface ViewProps extends EditorProps {
  api: SessionApi;
  data: SessionData;
  frameInfo: NonNullable<SessionData["frame"]>;
  onReload(): void;
}

function EditorView({ api, data, frameInfo, onReload, parentOrigin, backHref, username }: ViewProps) {
  const { fps, frameCount, width, height } = frameInfo;
  const [s, dispatch] = useReducer(reducer, undefined, () => ({ h: history(data.tracks), selectedId: null, version: data.version, saved: data.tracks }));
  const tracks = s.h.present;
  const sorted = useMemo(() => [...tracks].sort((a, b) => a.firstFrame - b.firstFrame || a.id - b.id), [tracks]);
  const selected = s.selectedId != null ? (tracks.find((t) => t.id === s.selectedId) ?? null) : null;
  const dirty = tracks !== s.saved;

  const stage = useRef<VideoStageHandle>(null);
  const [frame, setFrame] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [tool, setTool] = useState<"select" | "draw">("select");
  const [drawType, setDrawType] = useState<Track["type"]>("face");
  const [drawMode, setDrawMode] = useState<DrawMode>("static");
  const [liveTrackId, setLiveTrackId] = useState<number | null>(null);
  const [preview, setPreview] = useState<PreviewStyle>({ on: false, style: "MOSAIC", shape: "RECTANGLE", color: "#000000" });
  const [bulkType, setBulkType] = useState<Track["type"] | "all">("all");
  const [bulkBelow, setBulkBelow] = useState("0.5");
  const [mergeFrom, setMergeFrom] = useState<number | null>(null);
  const [help, setHelp] = useState(false);
  const [notice, setNotice] = useState<{ kind: "error" | "info" | "conflict"; text: string } | null>(null);
  const [saving, setSaving] = useState(false);
  const [following, setFollowing] = useState(false);
  const [exp, setExp] = useState<ExportStatus | null>(null);
  const [exporting, setExporting] = useState(false);
  const [savedAt, setSavedAt] = useState<string | null>(data.editedAt);

  const post = useCallback(
    (type: ObscuraEvent, extra: Record<string, unknown> = {}) => {
      if (!parentOrigin || window.parent === window) return;
      window.parent.postMessage({ source: "obscura", type, projectId: api.projectId, sessionId: api.sessionId, ...extra }, parentOrigin);
    },
    [parentOrigin, api],
  );

  const edit = useCallback((next: Track[], select?: number | null) => dispatch({ type: "edit", tracks: next, select }), []);
  const seek = useCallback((f: number) => stage.current?.seek(f), []);
  const select = useCallback(
    (id: number | null) => {
      if (mergeFrom != null && id != null && id !== mergeFrom) {
        const a = tracks.find((t) => t.id === mergeFrom);
        const b = tracks.find((t) => t.id === id);
        setMergeFrom(null);
        if (a && b) {
          edit(replaceTrack(tracks, mergeTracks(a, b)).filter((t) => t.id !== b.id), a.id);
          setNotice({ kind: "info", text: `Merged track ${b.id} into ${a.id}.` });
        }
        return;
      }
      dispatch({ type: "select", id });
    },
    [mergeFrom, tracks, edit],
  );
  // the frame shown now, updated at once by seeks (key presses quicker than React's renders step from it)
  const frameRef = useRef(0);
  frameRef.current = frame;
  const onFrame = useCallback((f: number) => {
    frameRef.current = f;
    setFrame(f);
  }, []);
  const selectAndShow = useCallback(
    (id: number) => {
      select(id);
      const t = tracks.find((x) => x.id === id);
      if (t && (frameRef.current < t.firstFrame || frameRef.current > t.lastFrame)) seek(t.firstFrame);
    },
    [select, tracks, seek],
  );

  // the existing export, if any, and the transcript for captions
  const [captions, setCaptions] = useState<string | null>(null);
  useEffect(() => {
    api.exportStatus().then(setExp, () => undefined);
    const src = api.url("/transcript.vtt");
    fetch(src, { cache: "no-store" }).then((r) => r.ok && setCaptions(src), () => undefined);
  }, [api]);

  // ---- edits

  const onBoxChange = useCallback((id: number, box: Box) => {
    const t = tracks.find((x) => x.id === id);
    if (t) edit(replaceTrack(tracks, setKeyframe(t, frame, box)));
  }, [tracks, frame, edit]);

  const onDrawn = useCallback(
    async (box: Box) => {
      const id = nextId(tracks);
      const t = drawnTrack(id, drawType, frame, box, drawMode, frameCount);
      const next = [...tracks, t];
      edit(next, id);
      setTool("select");
      if (drawMode === "live") {
        setLiveTrackId(id);
        setNotice({ kind: "info", text: `Live tracking track ${id}: play the video and keep the pointer on the object; pause to stop.` });
      } else if (drawMode === "auto") {
        setFollowing(true);
        try {
          const r = await api.follow(frame, box, 600);
          edit(replaceTrack(next, { ...t, firstFrame: r.firstFrame, lastFrame: r.lastFrame, keyframes: r.keyframes.map((k) => ({ ...k })) }), id);
          setNotice({ kind: "info", text: `Track ${id} followed from frame ${r.firstFrame} to ${r.lastFrame}.` });
        } catch (e) {
          setNotice({ kind: "error", text: `Could not follow the object: ${(e as Error).message}` });
        } finally {
          setFollowing(false);
        }
      }
    },
    [tracks, drawType, drawMode, frame, frameCount, edit, api],
  );

  const onLive = useCallback((id: number, f: number, box: Box) => {
    const t = tracks.find((x) => x.id === id);
    if (t) dispatch({ type: "live", tracks: replaceTrack(tracks, setKeyframe(t, f, box)) });
  }, [tracks]);

  const onPlaying = useCallback((p: boolean) => {
    setPlaying(p);
    if (!p) setLiveTrackId((live) => {
      if (live != null) setNotice({ kind: "info", text: `Live tracking of track ${live} stopped.` });
      return null;
    });
  }, []);

  const toggleTrack = useCallback((id: number) => {
    const t = tracks.find((x) => x.id === id);
    if (t) edit(replaceTrack(tracks, { ...t, enabled: t.enabled === false ? undefined : false, reviewed: true }));
  }, [tracks, edit]);

  const deleteSelected = useCallback(() => {
    if (!selected) return;
    edit(tracks.filter((t) => t.id !== selected.id), null);
  }, [selected, tracks, edit]);

  const keyframeHere = useCallback(() => {
    if (!selected) return;
    const box = boxAt({ ...selected, firstFrame: Math.min(selected.firstFrame, frame), lastFrame: Math.max(selected.lastFrame, frame) }, frame)!;
    edit(replaceTrack(tracks, setKeyframe(selected, frame, box)));
  }, [selected, frame, tracks, edit]);

  const span = useCallback(
    (which: "in" | "out") => {
      if (!selected) return;
      const t = which === "in" ? setSpan(selected, frame, Math.max(frame, selected.lastFrame)) : setSpan(selected, Math.min(frame, selected.firstFrame), frame);
      if (t) edit(replaceTrack(tracks, t));
    },
    [selected, frame, tracks, edit],
  );

  const split = useCallback(() => {
    if (!selected) return;
    const parts = splitTrack(selected, frame, nextId(tracks));
    if (!parts) return setNotice({ kind: "error", text: "Split needs a frame inside the track, after its first frame." });
    edit([...replaceTrack(tracks, parts[0]), parts[1]], parts[1].id);
  }, [selected, frame, tracks, edit]);

  const bulk = useCallback(
    (accept: boolean) => {
      const below = bulkBelow.trim() === "" ? null : Number(bulkBelow);
      if (below != null && !(below >= 0 && below <= 1)) return setNotice({ kind: "error", text: "The score must be between 0 and 1." });
      edit(bulkDecide(tracks, { type: bulkType, below }, accept));
    },
    [bulkBelow, bulkType, tracks, edit],
  );

  const classToggle = useCallback((type: Track["type"], on: boolean) => edit(bulkDecide(tracks, { type }, on)), [tracks, edit]);

  const jumpToReview = useCallback(() => {
    const t = nextToReview(tracks, s.selectedId, 0.5);
    if (!t) return setNotice({ kind: "info", text: "Every track is reviewed." });
    dispatch({ type: "select", id: t.id });
    seek(t.firstFrame);
  }, [tracks, s.selectedId, seek]);

  const jumpKeyframe = useCallback(
    (dir: 1 | -1) => {
      const candidates = selected ? [selected] : tracks;
      let best: number | null = null;
      for (const t of candidates) {
        const f = neighbourKeyframe(t, frame, dir);
        if (f != null && (best == null || (dir > 0 ? f < best : f > best))) best = f;
      }
      if (best != null) seek(best);
    },
    [selected, tracks, frame, seek],
  );

  // ---- save and export

  const save = useCallback(async (): Promise<boolean> => {
    if (saving) return false;
    setSaving(true);
    const toSave = tracks;
    try {
      const r = await api.save(s.version, toSave);
      dispatch({ type: "saved", version: r.version, tracks: toSave });
      setSavedAt(r.editedAt);
      setNotice(null);
      post("saved", { version: r.version, editedAt: r.editedAt });
      return true;
    } catch (e) {
      const err = e as ApiError;
      setNotice({ kind: err.status === 409 ? "conflict" : "error", text: err.message });
      return false;
    } finally {
      setSaving(false);
    }
  }, [saving, tracks, api, s.version, post]);

  const startExport = useCallback(async () => {
    if (dirty && !(await save())) return;
    setExporting(true);
    try {
      const renderConfig: Record<string, unknown> = { redactionStyle: preview.style, redactionShape: preview.shape };
      if (preview.style === "FILL" || preview.style === "OUTLINE") renderConfig.redactionColor = preview.color;
      const { name } = await api.startExport(renderConfig);
      post("exportStarted", { operation: name });
      setExp({ operation: { name, done: false, status: "queued", progressPercent: 0, error: null }, file: null });
      for (;;) {
        await new Promise((r) => setTimeout(r, 1000));
        const st = await api.exportStatus();
        if (st.operation?.name !== name) continue;
        setExp(st);
        if (st.operation.done) {
          const ok = st.operation.status === "succeeded";
          post("exportDone", { operation: name, status: ok ? "succeeded" : "failed", ...(ok && st.file ? { downloadUrl: new URL(api.url("/export/file"), window.location.href).href } : {}) });
          if (!ok) setNotice({ kind: "error", text: `Export failed: ${st.operation.error ?? "unknown error"}` });
          break;
        }
      }
    } catch (e) {
      setNotice({ kind: "error", text: `Export could not start: ${(e as Error).message}` });
    } finally {
      setExporting(false);
    }
  }, [dirty, save, api, preview, post]);

  // ---- keys (CVAT's where it has one)

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const el = e.target as HTMLElement;
      if (el && (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA" || el.isContentEditable)) return;
      const k = e.key;
      const ctrl = e.ctrlKey || e.metaKey;
      // Space on a focused button would also click it: play/pause wins, the button lets go
      if (k === " " && el?.tagName === "BUTTON") el.blur();
      if (ctrl && (k === "z" || k === "Z")) {
        e.preventDefault();
        dispatch({ type: e.shiftKey ? "redo" : "undo" });
        return;
      }
      if (ctrl && (k === "y" || k === "Y")) {
        e.preventDefault();
        dispatch({ type: "redo" });
        return;
      }
      if (ctrl && (k === "s" || k === "S")) {
        e.preventDefault();
        void save();
        return;
      }
      if (ctrl || e.altKey) return;
      const step = e.shiftKey ? 10 : 1;
      switch (k) {
        case "f":
        case "F":
        case "ArrowRight":
          seek(frameRef.current + step);
          break;
        case "d":
        case "D":
        case "ArrowLeft":
          seek(frameRef.current - step);
          break;
        case " ":
          stage.current?.toggle();
          break;
        case "k":
        case "K":
          keyframeHere();
          break;
        case "o":
        case "O":
          span("out");
          break;
        case "i":
        case "I":
          span("in");
          break;
        case "r":
        case "R":
          jumpKeyframe(1);
          break;
        case "e":
        case "E":
          jumpKeyframe(-1);
          break;
        case "Delete":
        case "Backspace":
          deleteSelected();
          break;
        case "n":
        case "N":
          setTool((t) => (t === "draw" ? "select" : "draw"));
          break;
        case "h":
        case "H":
          if (selected) toggleTrack(selected.id);
          break;
        case "u":
        case "U":
          jumpToReview();
          break;
        case "?":
          setHelp((v) => !v);
          break;
        case "Escape":
          setTool("select");
          setMergeFrom(null);
          setHelp(false);
          break;
        default:
          return;
      }
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [frame, seek, keyframeHere, span, jumpKeyframe, deleteSelected, selected, toggleTrack, jumpToReview, save]);

  // leaving with unsaved edits asks first
  useEffect(() => {
    if (!dirty) return;
    const onLeave = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", onLeave);
    return () => window.removeEventListener("beforeunload", onLeave);
  }, [dirty]);

  const classes = useMemo(() => {
    const m = new Map<Track["type"], { n: number; on: number }>();
    for (const t of tracks) {
      const c = m.get(t.type) ?? { n: 0, on: 0 };
      c.n++;
      if (t.enabled !== false) c.on++;
      m.set(t.type, c);
    }
    return [...m.entries()];
  }, [tracks]);

  const thumbUrl = useCallback(
    (t: Track) => {
      let best = t.keyframes[0]!;
      for (const k of t.keyframes) if ((k.score ?? 0) > (best.score ?? 0)) best = k;
      const b = best.box;
      return api.url(`/frame?frame=${best.frame}&x=${Math.round(b.x)}&y=${Math.round(b.y)}&w=${Math.max(1, Math.round(b.width))}&h=${Math.max(1, Math.round(b.height))}&height=64`);
    },
    [api],
  );

  const time = (f: number) => {
    const sec = f / fps;
    return `${Math.floor(sec / 60)}:${(sec % 60).toFixed(2).padStart(5, "0")}`;
  };

  const op = exp?.operation;
  const exportRunning = exporting || (op != null && !op.done);

  return (
    <div className="flex h-screen flex-col bg-slate-950 text-slate-200" data-testid="editor">
      <header className="flex items-center gap-3 border-b border-slate-800 bg-slate-900 px-4 py-2">
        {backHref && (
          <a href={backHref} className="text-sm font-bold tracking-tight text-white hover:underline">
            Obscura
          </a>
        )}
        <span className="text-slate-600">/</span>
        <span className="truncate font-medium text-slate-100" title={data.name}>
          {data.name}
        </span>
        <span className="text-xs text-slate-500" data-testid="save-state">
          {dirty ? "Unsaved changes" : `Saved · version ${s.version}${savedAt ? ` · ${savedAt.slice(0, 16).replace("T", " ")} UTC` : ""}`}
        </span>
        <div className="ml-auto flex items-center gap-2">
          <ToolButton onClick={() => dispatch({ type: "undo" })} disabled={!s.h.past.length} title="Undo (Ctrl+Z)">
            Undo
          </ToolButton>
          <ToolButton onClick={() => dispatch({ type: "redo" })} disabled={!s.h.future.length} title="Redo (Ctrl+Shift+Z)">
            Redo
          </ToolButton>
          <ToolButton onClick={() => setHelp(true)} title="Keyboard shortcuts (?)">
            ?
          </ToolButton>
          <button type="button" onClick={() => void save()} disabled={saving || !dirty} className="rounded-md bg-slate-100 px-3.5 py-1.5 text-sm font-semibold text-slate-900 hover:bg-white disabled:opacity-40">
            {saving ? "Saving…" : "Save"}
          </button>
          <button type="button" onClick={() => void startExport()} disabled={exportRunning} className="rounded-md bg-brand-600 px-3.5 py-1.5 text-sm font-semibold text-white hover:bg-brand-700 disabled:opacity-50">
            {exportRunning ? "Exporting…" : "Export"}
          </button>
          <span className="text-xs text-slate-500">{username}</span>
        </div>
      </header>

      {notice && (
        <div
          role="alert"
          data-testid={notice.kind === "conflict" ? "conflict" : "notice"}
          className={`flex items-center gap-3 px-4 py-2 text-sm ${notice.kind === "info" ? "bg-sky-950 text-sky-200" : notice.kind === "conflict" ? "bg-amber-950 text-amber-100" : "bg-red-950 text-red-200"}`}
        >
          <span className="flex-1">
            {notice.kind === "conflict" && <strong className="mr-1">Not saved:</strong>}
            {notice.text}
          </span>
          {notice.kind === "conflict" && (
            <button type="button" className="rounded bg-amber-200 px-2.5 py-1 text-xs font-semibold text-amber-950" onClick={onReload}>
              Reload their version
            </button>
          )}
          <button type="button" aria-label="Dismiss" className="text-lg leading-none opacity-70 hover:opacity-100" onClick={() => setNotice(null)}>
            ×
          </button>
        </div>
      )}
      {exp && (op || exp.file) && (
        <div className="flex items-center gap-3 border-b border-slate-800 bg-slate-900/60 px-4 py-1.5 text-xs" data-testid="export-state">
          {op && !op.done ? (
            <>
              <span>Exporting</span>
              <div className="h-1.5 w-64 overflow-hidden rounded bg-slate-700">
                <div className="h-full bg-brand-500 transition-all" style={{ width: `${op.progressPercent}%` }} />
              </div>
              <span data-testid="export-progress">{Math.round(op.progressPercent)}%</span>
            </>
          ) : exp.file ? (
            <>
              <span>Exported {exp.file.renderedAt.slice(0, 16).replace("T", " ")} UTC{exp.file.leakCount ? ` · leak check: ${exp.file.leakCount} possible leak(s)` : ""}</span>
              <a href={api.url("/export/file")} download className="font-semibold text-sky-300 hover:underline" data-testid="download">
                Download MP4
              </a>
            </>
          ) : null}
        </div>
      )}

      <div className="flex min-h-0 flex-1">
        <main className="flex min-w-0 flex-1 flex-col gap-2 p-3">
          <VideoStage
            ref={stage}
            src={api.url("/media")}
            fps={fps}
            frameCount={frameCount}
            width={width}
            height={height}
            tracks={tracks}
            frame={frame}
            selectedId={s.selectedId}
            tool={tool}
            preview={preview}
            liveTrackId={liveTrackId}
            captionsSrc={captions}
            maxHeight={typeof window === "undefined" ? 480 : Math.max(240, window.innerHeight - 360)}
            onFrame={onFrame}
            onPlaying={onPlaying}
            onSelect={select}
            onBoxChange={onBoxChange}
            onDrawn={(b) => void onDrawn(b)}
            onLive={onLive}
            onReady={() => post("ready", { version: s.version })}
          />
          <div className="flex items-center gap-2 text-sm">
            <ToolButton onClick={() => seek(frame - 1)} title="Previous frame (D, ←)">
              ◀︎
            </ToolButton>
            <button type="button" onClick={() => stage.current?.toggle()} className="w-20 rounded-md bg-slate-800 px-3 py-1.5 font-semibold hover:bg-slate-700" title="Play / pause (Space)">
              {playing ? "Pause" : "Play"}
            </button>
            <ToolButton onClick={() => seek(frame + 1)} title="Next frame (F, →)">
              ▶︎
            </ToolButton>
            <span className="font-mono text-xs text-slate-400" data-testid="frame-counter">
              frame <span data-testid="frame">{frame}</span> / {frameCount - 1} · {time(frame)}
            </span>
            {following && <span className="text-xs text-sky-300">following the object…</span>}
            {liveTrackId != null && <span className="text-xs text-pink-300">live tracking #{liveTrackId}</span>}
            <span className="ml-auto flex items-center gap-3 text-xs text-slate-400">
              <span className="flex items-center gap-1">
                <span className="inline-block h-2.5 w-2.5 rounded-sm" style={{ background: CLASS_COLORS.face }} /> detected
              </span>
              <span className="flex items-center gap-1">
                <span className="inline-block h-2.5 w-2.5 rounded-sm" style={{ background: MANUAL_COLOR }} /> drawn
              </span>
            </span>
          </div>
          <Timeline tracks={sorted} frameCount={frameCount} fps={fps} frame={frame} selectedId={s.selectedId} onSeek={seek} onSelect={(id) => dispatch({ type: "select", id })} />
        </main>

        <aside className="flex w-[22rem] shrink-0 flex-col border-l border-slate-800 bg-slate-900">
          <div className="space-y-3 border-b border-slate-800 p-3 text-xs">
            <Section title="Draw">
              <div className="flex flex-wrap items-center gap-2">
                <button
                  type="button"
                  onClick={() => setTool((t) => (t === "draw" ? "select" : "draw"))}
                  className={`rounded-md px-2.5 py-1 font-semibold ${tool === "draw" ? "bg-pink-500 text-white" : "bg-slate-800 hover:bg-slate-700"}`}
                  title="Draw a box (N)"
                  data-testid="draw-tool"
                >
                  {tool === "draw" ? "Drawing… (Esc)" : "Draw box"}
                </button>
                <select aria-label="Class of a drawn box" value={drawType} onChange={(e) => setDrawType(e.target.value as Track["type"])} className="rounded bg-slate-800 px-1.5 py-1">
                  {OBJECT_TYPES.map((t) => (
                    <option key={t} value={t}>
                      {CLASS_LABELS[t]}
                    </option>
                  ))}
                </select>
                <select aria-label="How a drawn box moves" value={drawMode} onChange={(e) => setDrawMode(e.target.value as DrawMode)} className="rounded bg-slate-800 px-1.5 py-1" data-testid="draw-mode">
                  <option value="static">Static (every frame)</option>
                  <option value="auto">Track automatically</option>
                  <option value="live">Live track (pointer)</option>
                </select>
              </div>
            </Section>
            <Section title="Preview">
              <div className="flex flex-wrap items-center gap-2">
                <label className="flex items-center gap-1.5">
                  <input type="checkbox" checked={preview.on} onChange={(e) => setPreview({ ...preview, on: e.target.checked })} data-testid="preview-toggle" /> show style
                </label>
                <select aria-label="Redaction style" value={preview.style} onChange={(e) => setPreview({ ...preview, style: e.target.value as PreviewStyle["style"] })} className="rounded bg-slate-800 px-1.5 py-1" data-testid="style">
                  {(["MOSAIC", "PIXELATE", "BLUR", "FILL", "OUTLINE"] as const).map((st) => (
                    <option key={st} value={st}>
                      {st.toLowerCase()}
                    </option>
                  ))}
                </select>
                <select aria-label="Redaction shape" value={preview.shape} onChange={(e) => setPreview({ ...preview, shape: e.target.value as PreviewStyle["shape"] })} className="rounded bg-slate-800 px-1.5 py-1">
                  <option value="RECTANGLE">rectangle</option>
                  <option value="ELLIPSE">ellipse</option>
                </select>
                {(preview.style === "FILL" || preview.style === "OUTLINE") && <input type="color" aria-label="Colour" value={preview.color} onChange={(e) => setPreview({ ...preview, color: e.target.value })} className="h-6 w-8 bg-transparent" />}
              </div>
            </Section>
            <Section title="Classes">
              <div className="flex flex-wrap gap-1.5">
                {classes.map(([type, c]) => (
                  <label key={type} className="flex items-center gap-1 rounded bg-slate-800 px-1.5 py-1" title="Redact every track of this class">
                    <input type="checkbox" checked={c.on > 0} ref={(el) => { if (el) el.indeterminate = c.on > 0 && c.on < c.n; }} onChange={(e) => classToggle(type, e.target.checked)} aria-label={`Redact ${CLASS_LABELS[type]}`} />
                    <span className="inline-block h-2 w-2 rounded-sm" style={{ background: CLASS_COLORS[type] }} />
                    {CLASS_LABELS[type]} <span className="text-slate-500">{c.on}/{c.n}</span>
                  </label>
                ))}
                {!classes.length && <span className="text-slate-500">no tracks</span>}
              </div>
            </Section>
            <Section title="Bulk">
              <div className="flex flex-wrap items-center gap-1.5">
                <select aria-label="Bulk class" value={bulkType} onChange={(e) => setBulkType(e.target.value as Track["type"] | "all")} className="rounded bg-slate-800 px-1.5 py-1">
                  <option value="all">all classes</option>
                  {OBJECT_TYPES.map((t) => (
                    <option key={t} value={t}>
                      {CLASS_LABELS[t]}
                    </option>
                  ))}
                </select>
                <span>score below</span>
                <input aria-label="Score below" value={bulkBelow} onChange={(e) => setBulkBelow(e.target.value)} placeholder="any" className="w-12 rounded bg-slate-800 px-1.5 py-1" />
                <button type="button" className="rounded bg-emerald-700 px-2 py-1 font-semibold hover:bg-emerald-600" onClick={() => bulk(true)}>
                  Accept
                </button>
                <button type="button" className="rounded bg-slate-700 px-2 py-1 font-semibold hover:bg-slate-600" onClick={() => bulk(false)}>
                  Reject
                </button>
              </div>
            </Section>
            <Section title={selected ? `Track #${selected.id} · ${CLASS_LABELS[selected.type]}${trackScore(selected) != null ? ` · ${trackScore(selected)!.toFixed(2)}` : ""}` : "Track"}>
              {selected ? (
                <div className="flex flex-wrap gap-1.5">
                  <SmallButton onClick={() => span("in")} title="Start the track here (I)">In here</SmallButton>
                  <SmallButton onClick={() => span("out")} title="End the track here (O)">Out here</SmallButton>
                  <SmallButton onClick={keyframeHere} title="Keyframe here (K)">Keyframe</SmallButton>
                  <SmallButton onClick={split} title="Split at this frame">Split</SmallButton>
                  <SmallButton onClick={() => setMergeFrom(selected.id)} title="Merge: then click the other track">{mergeFrom === selected.id ? "Pick a track…" : "Merge…"}</SmallButton>
                  <SmallButton onClick={() => toggleTrack(selected.id)} title="Redact or not (H)">{selected.enabled === false ? "Redact" : "Don't redact"}</SmallButton>
                  <SmallButton onClick={deleteSelected} title="Delete (Del)">Delete</SmallButton>
                  <span className="w-full text-slate-500">
                    frames {selected.firstFrame}–{selected.lastFrame} · {selected.keyframes.length} keyframes
                  </span>
                </div>
              ) : (
                <p className="text-slate-500">Click a box or a track to select it.</p>
              )}
            </Section>
            <button type="button" onClick={jumpToReview} className="w-full rounded-md bg-slate-800 px-2 py-1.5 font-semibold hover:bg-slate-700" title="Next track not yet reviewed or with a low score (U)">
              Next to review →
            </button>
          </div>
          <div className="min-h-0 flex-1">
            <TrackList tracks={sorted} selectedId={s.selectedId} thumbUrl={thumbUrl} onSelect={selectAndShow} onToggle={toggleTrack} />
          </div>
        </aside>
      </div>
      {help && <ShortcutsHelp onClose={() => setHelp(false)} />}
    </div>
  );
}

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <section>
      <h3 className="mb-1.5 text-[11px] font-semibold tracking-wide text-slate-400 uppercase">{title}</h3>
      {children}
    </section>
  );
}

function ToolButton(props: React.ButtonHTMLAttributes<HTMLButtonElement>) {
  return <button type="button" {...props} className="rounded-md bg-slate-800 px-2.5 py-1.5 text-sm hover:bg-slate-700 disabled:opacity-40" />;
}

function SmallButton(props: React.ButtonHTMLAttributes<HTMLButtonElement>) {
  return <button type="button" {...props} className="rounded bg-slate-800 px-2 py-1 font-medium hover:bg-slate-700" />;
}
