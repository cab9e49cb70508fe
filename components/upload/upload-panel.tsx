"use client";
/**
 * Upload videos and images from the browser (docs/sessions.md#uploading-from-the-browser): drop
 * them or pick them, choose what to find, and each file goes up in resumable 8 MiB chunks (tus; an
 * interrupted upload of the same file continues where it stopped, also after a reload), then
 * starts the same process operation as the API. `onStarted` runs when a video's operation was
 * created; an image's redaction is followed here and ends with its download.
 */
import { useCallback, useRef, useState } from "react";
import * as tus from "tus-js-client";

const CHOICES: Array<{ feature: string; label: string; on: boolean }> = [
  { feature: "FACE_DETECTION", label: "Faces", on: true },
  { feature: "LICENSE_PLATE_DETECTION", label: "Licence plates", on: true },
  { feature: "HEAD_DETECTION", label: "Heads", on: false },
  { feature: "PERSON_DETECTION", label: "People", on: false },
  { feature: "VEHICLE_DETECTION", label: "Vehicles", on: false },
  { feature: "ID_DETECTION", label: "ID cards", on: false },
  { feature: "SCREEN_DETECTION", label: "Screens", on: false },
  { feature: "DOCUMENT_DETECTION", label: "Documents", on: false },
  { feature: "SPEECH_TRANSCRIPTION", label: "Transcript (English)", on: false },
];

interface Item {
  key: string;
  name: string;
  size: number;
  sent: number;
  state: "uploading" | "starting" | "started" | "redacting" | "redacted" | "failed";
  error?: string;
  resumed?: boolean;
  /** An image: progress of its redaction, then the JPG to download. */
  percent?: number;
  downloadUrl?: string;
}

const mb = (n: number) => (n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(2)} GB` : `${(n / 1024 ** 2).toFixed(1)} MB`);

export function UploadPanel({ projectId, onStarted, chooseProject = false }: { projectId: string; onStarted?: (projectId: string, sessionId: string) => void; chooseProject?: boolean }) {
  const [features, setFeatures] = useState(() => new Set(CHOICES.filter((c) => c.on).map((c) => c.feature)));
  const [project, setProject] = useState(projectId);
  const [items, setItems] = useState<Item[]>([]);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const update = (key: string, patch: Partial<Item>) => setItems((xs) => xs.map((x) => (x.key === key ? { ...x, ...patch } : x)));

  /** An image is redacted in one go: show its progress, then the download. */
  const followImage = async (key: string, url: string) => {
    update(key, { state: "redacting", percent: 0 });
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      const r = await fetch(url, { cache: "no-store" });
      const st = (await r.json().catch(() => null)) as { operation?: { done: boolean; progressPercent: number; error: string | null }; downloadUrl?: string | null; error?: { message: string } } | null;
      if (!r.ok || !st?.operation) return update(key, { state: "failed", error: st?.error?.message ?? `${r.status}` });
      if (!st.operation.done) {
        update(key, { percent: st.operation.progressPercent });
        continue;
      }
      if (st.operation.error || !st.downloadUrl) return update(key, { state: "failed", error: st.operation.error ?? "no output" });
      return update(key, { state: "redacted", downloadUrl: st.downloadUrl });
    }
  };

  const start = useCallback(
    (files: File[]) => {
      const chosen = [...features];
      const target = project.trim();
      for (const file of files) {
        const key = `${file.name}:${file.size}:${Date.now()}:${Math.random()}`;
        setItems((xs) => [...xs, { key, name: file.name, size: file.size, sent: 0, state: "uploading" }]);
        const upload = new tus.Upload(file, {
          endpoint: `/api/v1/projects/${encodeURIComponent(target)}/uploads`,
          chunkSize: 8 * 1024 * 1024,
          retryDelays: [0, 1000, 3000, 5000, 10000],
          metadata: { filename: file.name, filetype: file.type },
          storeFingerprintForResuming: true,
          removeFingerprintOnSuccess: true,
          onProgress: (sent) => update(key, { sent }),
          onError: (e) => {
            const body = (e as tus.DetailedError).originalResponse?.getBody();
            let msg = e.message;
            try {
              msg = (JSON.parse(body ?? "") as { error: { message: string } }).error.message;
            } catch {
              /* tus's own message */
            }
            update(key, { state: "failed", error: msg });
          },
          onSuccess: async () => {
            update(key, { state: "starting", sent: file.size });
            const r = await fetch(`${upload.url}:process`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ features: chosen }) });
            const body = (await r.json().catch(() => null)) as { kind?: "video" | "image"; sessionId?: string; resultUrl?: string; error?: { message: string } } | null;
            if (!r.ok || !body?.kind) return update(key, { state: "failed", error: body?.error?.message ?? `${r.status} ${r.statusText}` });
            if (body.kind === "image") return followImage(key, body.resultUrl!);
            update(key, { state: "started" });
            onStarted?.(target, body.sessionId!);
          },
        });
        void upload.findPreviousUploads().then((previous) => {
          if (previous.length) {
            upload.resumeFromPreviousUpload(previous[0]!);
            update(key, { resumed: true });
          }
          upload.start();
        });
      }
    },
    [features, project, onStarted],
  );

  const onDrop = (e: React.DragEvent) => {
    e.preventDefault();
    setOver(false);
    start([...e.dataTransfer.files]);
  };

  return (
    <section className="rounded-xl bg-white p-5 shadow-sm ring-1 ring-slate-200" data-testid="upload-panel">
      <div className="flex flex-wrap items-end gap-4">
        {chooseProject && (
          <label className="text-sm">
            <span className="mb-1 block font-medium text-slate-800">Project</span>
            <input id="upload-project" value={project} onChange={(e) => setProject(e.target.value)} className="w-56 rounded-md px-3 py-1.5 text-sm ring-1 ring-slate-300" />
          </label>
        )}
        <fieldset className="flex flex-wrap gap-x-4 gap-y-1.5 text-sm">
          <legend className="mb-1 font-medium text-slate-800">Find</legend>
          {CHOICES.map((c) => (
            <label key={c.feature} className="flex items-center gap-1.5 text-slate-700">
              <input
                type="checkbox"
                name="feature"
                value={c.feature}
                checked={features.has(c.feature)}
                onChange={(e) =>
                  setFeatures((f) => {
                    const n = new Set(f);
                    if (e.target.checked) n.add(c.feature);
                    else n.delete(c.feature);
                    return n;
                  })
                }
              />
              {c.label}
            </label>
          ))}
        </fieldset>
      </div>
      <div
        data-testid="drop-zone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
        onClick={() => input.current?.click()}
        className={`mt-4 flex cursor-pointer flex-col items-center justify-center rounded-lg border-2 border-dashed px-6 py-8 text-center transition ${over ? "border-brand-600 bg-brand-50" : "border-slate-300 hover:border-slate-400"}`}
      >
        <p className="font-semibold text-slate-800">Drop videos or images here, or click to choose</p>
        <p className="mt-1 text-sm text-slate-500">Videos (MP4, MOV, MKV, WebM, AVI…) open in the editor; images (JPG, PNG) are redacted to a JPG to download. Large files go up in resumable chunks: an interrupted upload continues where it stopped.</p>
        <input ref={input} type="file" accept="video/*,image/jpeg,image/png,.mkv,.avi,.ts,.mts" multiple className="hidden" data-testid="file-input" disabled={!features.size || !project.trim()} onChange={(e) => e.target.files && start([...e.target.files])} />
      </div>
      {!features.size && <p className="mt-2 text-sm text-red-700">Choose at least one thing to find.</p>}
      {items.length > 0 && (
        <ul className="mt-4 space-y-2.5" data-testid="uploads">
          {items.map((it) => (
            <li key={it.key} className="text-sm" data-upload={it.name}>
              <div className="flex justify-between gap-3">
                <span className="truncate font-medium text-slate-800">{it.name}</span>
                <span className="shrink-0 text-slate-500">
                  {it.state === "uploading" && `${mb(it.sent)} of ${mb(it.size)} · ${Math.floor((100 * it.sent) / Math.max(1, it.size))}%${it.resumed ? " (resumed)" : ""}`}
                  {it.state === "starting" && "starting processing…"}
                  {it.state === "started" && "processing started"}
                  {it.state === "redacting" && `redacting… ${Math.round(it.percent ?? 0)}%`}
                  {it.state === "redacted" && (
                    <a href={it.downloadUrl} download className="font-semibold text-brand-600 hover:underline" data-testid="image-download">
                      Download the redacted image
                    </a>
                  )}
                  {it.state === "failed" && <span className="text-red-700">failed</span>}
                </span>
              </div>
              <div className="mt-1 h-1.5 overflow-hidden rounded bg-slate-100">
                <div className={`h-full transition-all ${it.state === "failed" ? "bg-red-500" : it.state === "started" || it.state === "redacted" ? "bg-emerald-500" : "bg-brand-600"}`} style={{ width: `${(100 * it.sent) / Math.max(1, it.size)}%` }} role="progressbar" aria-valuenow={Math.floor((100 * it.sent) / Math.max(1, it.size))} />
              </div>
              {it.error && (
                <p role="alert" className="mt-1 text-red-700">
                  {it.error}
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
