/**
 * Uploads from the browser (docs/sessions.md#uploading-from-the-browser): resumable with the tus
 * protocol (@tus/server, files in OBSCURA_DATA_DIR/uploads), owned by who started them, then
 * turned into the same process operation as POST videos:process (a video: a session to review in
 * the editor) or POST images:process (an image: redacted into a JPG to download).
 *
 * Route: /api/v1/projects/{projectId}/uploads[/{id}] (tus: POST creates, HEAD tells the offset to
 * resume from, PATCH appends a chunk, DELETE cancels), and POST .../uploads/{id}:process.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Server, type Upload } from "@tus/server";
import { FileStore } from "@tus/file-store";
import { ObscuraError } from "@/lib/errors";
import { parseBody } from "@/lib/api/parse";
import { uploadProcessRequestSchema } from "@/lib/api/upload";
import { config } from "../config";
import type { Principal } from "../auth/bearer";
import { createImageOperation, createVideoOperation } from "../operations/create";
import { getOperation } from "../operations/read-remove";
import { IMAGE_FEATURES } from "@/lib/api/common";

const VIDEO_EXT = new Set([".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".mpg", ".mpeg", ".ts", ".mts", ".m2ts", ".3gp", ".wmv", ".flv"]);
const IMAGE_EXT = new Set([".jpg", ".jpeg", ".png"]);
const DEFAULT_MAX = 20 * 1024 ** 3;

export function uploadMaxBytes(): number {
  const v = Number(process.env.OBSCURA_UPLOAD_MAX_BYTES);
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : DEFAULT_MAX;
}

const uploadsDir = () => path.join(config().dataDir, "uploads");

/** The principal of each request while tus handles it (its hooks only get the Request). */
const callers = new WeakMap<Request, { who: Principal; projectId: string }>();

const fail = (status_code: number, body: string) => Object.assign(new Error(body), { status_code, body: JSON.stringify({ error: { code: status_code, message: body } }) });

let server: Server | null = null;
let store: FileStore | null = null;

function tus(): Server {
  if (server) return server;
  fs.mkdirSync(uploadsDir(), { recursive: true });
  store = new FileStore({ directory: uploadsDir() });
  server = new Server({
    path: "/api/v1/uploads",
    datastore: store,
    maxSize: uploadMaxBytes(),
    relativeLocation: true,
    // every project has its own collection URL; ids are random UUIDs
    generateUrl: (req, { id }) => `${new URL(req.url).pathname.replace(/\/+$/, "")}/${id}`,
    namingFunction: () => crypto.randomUUID(),
    async onUploadCreate(req, upload) {
      const c = callers.get(req)!;
      const name = (upload.metadata?.filename ?? "").trim();
      if (!name) throw fail(400, "Upload-Metadata must give the file's name (filename)");
      const ext = path.extname(name).toLowerCase();
      if (!VIDEO_EXT.has(ext) && !IMAGE_EXT.has(ext)) {
        throw fail(415, `${JSON.stringify(name)} is not a video or image this server processes: use ${[...VIDEO_EXT, ...IMAGE_EXT].join(", ")}`);
      }
      return { metadata: { ...upload.metadata, filename: path.basename(name), owner: c.who.id, ownerName: c.who.name, projectId: c.projectId } };
    },
    async onIncomingRequest(req, id) {
      if (req.method === "POST") return; // creation: onUploadCreate checked it
      const c = callers.get(req)!;
      const u = await store!.getUpload(id).catch(() => null);
      if (!u || u.metadata?.owner !== c.who.id || u.metadata?.projectId !== c.projectId) throw fail(404, `no upload ${JSON.stringify(id)} of yours in this project`);
    },
    onResponseError(_req, err) {
      if ("status_code" in err && err.status_code === 413) return { status_code: 413, body: JSON.stringify({ error: { code: 413, message: `the file is larger than this server accepts (${uploadMaxBytes()} bytes, OBSCURA_UPLOAD_MAX_BYTES)` } }) };
      return undefined;
    },
  });
  return server;
}

/** Hands a tus request (POST, HEAD, PATCH, DELETE, OPTIONS) to the tus server for `who`. */
export async function handleTus(req: Request, who: Principal, projectId: string): Promise<Response> {
  if (who.scope) throw new ObscuraError("PERMISSION_DENIED", "embed tokens cannot upload");
  callers.set(req, { who, projectId });
  return tus().handleWeb(req);
}

/** The upload as stored, if `who` owns it in this project (404 otherwise). */
async function ownUpload(id: string, who: Principal, projectId: string): Promise<Upload> {
  tus();
  const u = /^[0-9a-f-]{36}$/.test(id) ? await store!.getUpload(id).catch(() => null) : null;
  if (!u || u.metadata?.owner !== who.id || u.metadata?.projectId !== projectId) throw new ObscuraError("NOT_FOUND", `no upload ${JSON.stringify(id)} of yours in project ${JSON.stringify(projectId)}`);
  return u;
}

/**
 * POST .../uploads/{id}:process: the finished upload becomes the input of a process operation,
 * created exactly as through the API; a reviewer who uploads is put in the video's acl.
 */
export type ProcessedUpload = { name: string; kind: "video"; sessionId: string } | { name: string; kind: "image"; resultUrl: string };

/** Features only a video has: left out of an image's request (the panel offers one list for both). */
const KNOWN_VIDEO_ONLY = new Set(["SPEECH_TRANSCRIPTION", "STATE_DROP", "MEDIA_PREPARE"]);
const MARKER = "upload.json";

export async function processUpload(id: string, who: Principal, projectId: string, body: unknown): Promise<ProcessedUpload> {
  const req = parseBody(uploadProcessRequestSchema, body);
  const u = await ownUpload(id, who, projectId);
  if (u.size == null || u.offset < u.size) {
    throw new ObscuraError("FAILED_PRECONDITION", `the upload is not complete: ${u.size == null ? "its size is not known yet" : `${u.size - u.offset} of ${u.size} bytes are missing`}; resume it first`);
  }
  const name = u.metadata!.filename!;
  // the file gets its own folder and its real name (the session is named after it)
  const dir = path.join(uploadsDir(), "files", id);
  const file = path.join(dir, name);
  const stored = path.join(uploadsDir(), id);
  if (fs.existsSync(file)) throw new ObscuraError("ALREADY_EXISTS", `upload ${JSON.stringify(id)} was already processed`);
  fs.mkdirSync(dir, { recursive: true });
  fs.renameSync(stored, file);
  fs.rmSync(`${stored}.json`, { force: true });
  const inputUri = pathToFileURL(file).href;
  const acl = who.role === "reviewer" ? [who.name, ...(req.acl ?? [])] : req.acl;
  try {
    if (IMAGE_EXT.has(path.extname(name).toLowerCase())) {
      // an image is redacted in one go (detection and MEDIA_RENDER) into a JPG beside it
      const output = path.join(dir, `${path.parse(name).name}-redacted.jpg`);
      const features = [...new Set([...req.features.filter((f) => (IMAGE_FEATURES as readonly string[]).includes(f) || !KNOWN_VIDEO_ONLY.has(f)), "MEDIA_RENDER"])];
      const op = await createImageOperation({ inputUri, outputUri: pathToFileURL(output).href, projectId, features });
      fs.writeFileSync(path.join(dir, MARKER), JSON.stringify({ owner: who.id, projectId, operation: op.name, output: path.basename(output) }));
      return { name: op.name, kind: "image", resultUrl: `/api/v1/projects/${encodeURIComponent(projectId)}/uploads/${id}` };
    }
    const sessionId = crypto.randomUUID();
    const op = await createVideoOperation({ inputUri, projectId, features: req.features, ...(acl ? { acl } : {}), videoContext: { ...(req.videoContext ?? {}), prepareConfig: { ...(req.videoContext?.prepareConfig ?? {}), sessionId } } });
    return { name: op.name, kind: "video", sessionId };
  } catch (e) {
    // a refused request leaves the upload as it was, to try again with other settings
    fs.renameSync(file, stored);
    fs.rmSync(dir, { recursive: true, force: true });
    await store!.configstore.set(id, u);
    throw e;
  }
}

/** An uploaded image's processing: its operation's state and, when done, the redacted JPG. */
export async function uploadResult(id: string, who: Principal, projectId: string): Promise<{ operation: { name: string; done: boolean; progressPercent: number; error: string | null }; downloadUrl: string | null }> {
  const m = readMarker(id, who, projectId);
  const op = await getOperation(m.operation);
  const file = path.join(uploadsDir(), "files", id, m.output);
  const ok = op.done && !op.error && fs.existsSync(file);
  return {
    operation: { name: op.name, done: op.done, progressPercent: op.metadata.progress.progressPercent, error: op.error?.message ?? null },
    downloadUrl: ok ? `/api/v1/projects/${encodeURIComponent(projectId)}/uploads/${id}/${encodeURIComponent(m.output)}` : null,
  };
}

/** The redacted JPG of an uploaded image (404 until it exists). */
export function uploadOutputFile(id: string, who: Principal, projectId: string, name: string): string {
  const m = readMarker(id, who, projectId);
  const file = path.join(uploadsDir(), "files", id, m.output);
  if (name !== m.output || !fs.existsSync(file)) throw new ObscuraError("NOT_FOUND", `no ${JSON.stringify(name)} for upload ${JSON.stringify(id)} yet`);
  return file;
}

function readMarker(id: string, who: Principal, projectId: string): { owner: string; projectId: string; operation: string; output: string } {
  const file = path.join(uploadsDir(), "files", /^[0-9a-f-]{36}$/.test(id) ? id : "-", MARKER);
  let m: { owner: string; projectId: string; operation: string; output: string } | null = null;
  try {
    m = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    /* none */
  }
  if (!m || m.owner !== who.id || m.projectId !== projectId) throw new ObscuraError("NOT_FOUND", `no processed image upload ${JSON.stringify(id)} of yours in project ${JSON.stringify(projectId)}`);
  return m;
}
