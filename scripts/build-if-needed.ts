/**
 * Runs `next build` when there is no production build, or when a source file is newer than it.
 * Used by `npm start` and by the integration tests.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const SOURCES = ["app", "components", "lib", "server", "public", "next.config.ts", "package.json", "tsconfig.json"];

function newestMtime(p: string): number {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const e of fs.readdirSync(p)) max = Math.max(max, newestMtime(path.join(p, e)));
  return max;
}

export function buildNeeded(appDir: string): boolean {
  const stamp = path.join(appDir, ".next", "BUILD_ID");
  if (!fs.existsSync(stamp)) return true;
  const built = fs.statSync(stamp).mtimeMs;
  return SOURCES.some((s) => newestMtime(path.join(appDir, s)) > built);
}

export function buildIfNeeded(appDir: string): void {
  if (!buildNeeded(appDir)) return;
  console.log("[obscura] building the web app (next build); this happens once after install or a code change...");
  const started = Date.now();
  const r = spawnSync(process.execPath, [path.join(appDir, "node_modules", "next", "dist", "bin", "next"), "build"], {
    cwd: appDir,
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
  });
  if (r.status !== 0) throw new Error(`next build failed (exit ${r.status})`);
  console.log(`[obscura] build done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

if (process.argv[1] && import.meta.filename === path.resolve(process.argv[1])) buildIfNeeded(process.cwd());
