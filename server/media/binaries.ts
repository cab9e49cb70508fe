/**
 * Where the ffmpeg and ffprobe executables are.
 *
 * `OBSCURA_FFMPEG` / `OBSCURA_FFPROBE` (absolute paths) win when set; otherwise the static builds
 * shipped in `@ffmpeg-installer/<platform>-<arch>` and `@ffprobe-installer/<platform>-<arch>` are
 * used. npm 11 may skip those packages' postinstall (`chmod u+x`), so the execute bit is set here
 * when missing.
 */
import { accessSync, chmodSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { ObscuraError } from "@/lib/errors";

const require = createRequire(import.meta.url);
const cache = new Map<string, string>();

export function ffmpegPath(): string {
  return locate("ffmpeg", "OBSCURA_FFMPEG", "@ffmpeg-installer");
}

export function ffprobePath(): string {
  return locate("ffprobe", "OBSCURA_FFPROBE", "@ffprobe-installer");
}

function locate(tool: "ffmpeg" | "ffprobe", envVar: string, scope: string): string {
  const fromEnv = process.env[envVar];
  if (fromEnv) return fromEnv;
  const cached = cache.get(tool);
  if (cached) return cached;
  const target = `${process.platform}-${process.arch}`;
  const binary = process.platform === "win32" ? `${tool}.exe` : tool;
  let file: string;
  try {
    file = path.join(path.dirname(require.resolve(`${scope}/${target}/package.json`)), binary);
    statSync(file);
  } catch (cause) {
    throw new ObscuraError(
      "INTERNAL",
      `no ${tool} executable for ${target}: install ${scope}/${tool} or set ${envVar} to the path of ${tool}`,
      { cause },
    );
  }
  ensureExecutable(file);
  cache.set(tool, file);
  return file;
}

function ensureExecutable(file: string): void {
  if (process.platform === "win32") return;
  try {
    accessSync(file, constants.X_OK);
  } catch {
    try {
      chmodSync(file, statSync(file).mode | 0o100);
    } catch (cause) {
      throw new ObscuraError("INTERNAL", `${file} is not executable and chmod u+x failed`, { cause });
    }
  }
}
