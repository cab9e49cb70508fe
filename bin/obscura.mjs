#!/usr/bin/env node
/**
 * Launcher of the `obscura` command (package.json "bin"): runs scripts/obscura.ts with tsx in a
 * child Node process, from any working directory, passing the arguments, stdio, signals and the
 * exit code through. docs/cli.md.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(path.join(root, "package.json"));
let tsx;
try {
  tsx = pathToFileURL(require.resolve("tsx")).href;
} catch {
  process.stderr.write(`obscura: tsx is not installed in ${root}; run \`npm ci\` there first\n`);
  process.exit(1);
}
// `npm run redact -- ...` runs in the package's folder; paths the user typed are relative to where npm was run.
const viaNpmRun = process.cwd() === root && !!process.env.INIT_CWD && !!process.env.npm_lifecycle_event && process.env.npm_lifecycle_event !== "npx";
const cwd = viaNpmRun ? process.env.INIT_CWD : process.cwd();
const child = spawn(process.execPath, ["--import", tsx, path.join(root, "scripts", "obscura.ts"), ...process.argv.slice(2)], {
  stdio: "inherit",
  cwd,
  // "@/..." imports resolve through the project's tsconfig paths, whatever the working directory.
  env: { ...process.env, TSX_TSCONFIG_PATH: process.env.TSX_TSCONFIG_PATH || path.join(root, "tsconfig.json") },
});
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("error", (e) => {
  process.stderr.write(`obscura: could not start node: ${e.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
