/**
 * Local filesystem backend (`file:///…`), plus the small stream/fs helpers the other backends share:
 * abort handling, progress counting, recursive listing and partial-file cleanup.
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ObscuraError, isObscuraError } from "@/lib/errors";
import type { Backend, TransferOptions } from "./index";

type FileLoc = { kind: "file"; path: string };

export const fileBackend: Backend<FileLoc> = {
  async download(loc, destPath, opts) {
    return copy(loc.path, destPath, opts);
  },
  async upload(srcPath, loc, opts) {
    await copy(srcPath, loc.path, opts);
  },
  async write(loc, data, opts) {
    await ensureParentDir(loc.path);
    await fsp.writeFile(loc.path, data, { signal: opts.signal }).catch((e) => {
      throw fsError(e, loc.path);
    });
  },
  async read(loc, opts) {
    return fsp.readFile(loc.path, { signal: opts.signal }).catch((e) => {
      throw fsError(e, loc.path);
    });
  },
  async exists(loc, opts) {
    if (loc.path.endsWith("/")) return (await fileBackend.list(loc, opts)).length > 0; // like S3/Azure: "holds something"
    const st = await fsp.stat(loc.path).catch((e) => {
      if (isMissing(e)) return null;
      throw fsError(e, loc.path);
    });
    return !!st?.isFile();
  },
  async list(loc) {
    return walkFiles(loc.path).catch((e) => {
      if (isMissing(e)) return []; // like S3/Azure: an absent prefix is simply empty
      throw fsError(e, loc.path);
    });
  },
  async remove(loc, opts) {
    const dir = path.resolve(loc.path);
    if (dir === path.parse(dir).root) throw new ObscuraError("INVALID_ARGUMENT", `refusing to remove the filesystem root ${dir}`);
    const names = await fileBackend.list(loc, opts);
    await fsp.rm(dir, { recursive: true, force: true }).catch((e) => {
      throw fsError(e, dir);
    });
    return names.length;
  },
};

async function copy(src: string, dest: string, opts: TransferOptions): Promise<{ bytes: number }> {
  const st = await fsp.stat(src).catch((e) => {
    throw fsError(e, src);
  });
  if (!st.isFile()) throw new ObscuraError("INVALID_ARGUMENT", `not a regular file: ${src}`);
  if (path.resolve(src) === path.resolve(dest)) return { bytes: st.size }; // copying onto itself would truncate it
  await ensureParentDir(dest);
  await streamToFile(fs.createReadStream(src), dest, opts, st.size).catch((e) => {
    throw fsError(e, isMissing(e) ? src : dest);
  });
  return { bytes: st.size };
}

// ---- shared helpers --------------------------------------------------------------------------

/** Pipes `source` into `destPath` with progress and abort support; removes the partial file on any failure. */
export async function streamToFile(
  source: NodeJS.ReadableStream,
  destPath: string,
  opts: TransferOptions,
  total?: number,
  extra: Transform[] = [],
): Promise<number> {
  await ensureParentDir(destPath);
  const counter = progressCounter(opts.onProgress, total);
  try {
    await pipeline([source, ...extra, counter, fs.createWriteStream(destPath)], { signal: opts.signal });
  } catch (e) {
    await fsp.rm(destPath, { force: true }).catch(() => {});
    throw e;
  }
  return counter.bytes;
}

export type CountingTransform = Transform & { bytes: number };

/** A pass-through that counts bytes and reports them to `onProgress`. */
export function progressCounter(onProgress?: TransferOptions["onProgress"], total?: number): CountingTransform {
  const t = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      t.bytes += chunk.length;
      onProgress?.(t.bytes, total);
      cb(null, chunk);
    },
  }) as CountingTransform;
  t.bytes = 0;
  return t;
}

/** Every regular file under `root` (symlinked files included, symlinked dirs not followed), as sorted "a/b.json" names. */
export async function walkFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  async function visit(dir: string, rel: string): Promise<void> {
    for (const ent of await fsp.readdir(dir, { withFileTypes: true })) {
      const abs = path.join(dir, ent.name);
      const name = rel ? `${rel}/${ent.name}` : ent.name;
      if (ent.isDirectory()) await visit(abs, name);
      else if (ent.isFile() || (ent.isSymbolicLink() && (await fsp.stat(abs).catch(() => null))?.isFile())) out.push(name);
    }
  }
  await visit(root, "");
  return out.sort();
}

export async function ensureParentDir(filePath: string): Promise<void> {
  await fsp.mkdir(path.dirname(filePath), { recursive: true }).catch((e) => {
    throw fsError(e, path.dirname(filePath));
  });
}

export function isAbortError(e: unknown): boolean {
  const err = e as { name?: string; code?: string } | null;
  return err?.name === "AbortError" || err?.code === "ABORT_ERR";
}

export function cancelled(what: string): ObscuraError {
  return new ObscuraError("CANCELLED", `the transfer of ${what} was cancelled`);
}

function isMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/** Maps a node:fs error to an ObscuraError naming the path. */
export function fsError(e: unknown, fallbackPath: string): ObscuraError {
  if (isObscuraError(e)) return e;
  if (isAbortError(e)) return cancelled(fallbackPath);
  const err = e as NodeJS.ErrnoException;
  const p = err.path ?? fallbackPath;
  switch (err.code) {
    case "ENOENT":
    case "ENOTDIR":
      return new ObscuraError("NOT_FOUND", `file not found: ${p}`);
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return new ObscuraError("PERMISSION_DENIED", `permission denied: ${p}`);
    case "EISDIR":
      return new ObscuraError("INVALID_ARGUMENT", `is a directory, not a file: ${p}`);
    case "ENOSPC":
    case "EDQUOT":
      return new ObscuraError("RESOURCE_EXHAUSTED", `no space left on the device while writing ${p}`);
    default:
      return new ObscuraError("UNAVAILABLE", `file operation on ${p} failed: ${err.message}`, { cause: e });
  }
}
