/**
 * Structured logging: one JSON line per event on stdout/stderr. Never pass secrets (tokens,
 * passwords, SAS signatures) in fields; URIs go through storage's redactUri first.
 */
type Fields = Record<string, unknown>;

type Level = "debug" | "info" | "warn" | "error";
const RANK: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };
let options: { minLevel: Level; stderrOnly: boolean } = { minLevel: "debug", stderrOnly: false };

/** For command-line tools: every line on stderr (stdout stays for their output), below `minLevel` dropped. */
export function configureLog(o: { minLevel?: Level; stderrOnly?: boolean }): void {
  options = { ...options, ...o };
}

function write(level: Level, msg: string, fields?: Fields) {
  if (level === "debug" && !process.env.OBSCURA_DEBUG) return;
  if (RANK[level] < RANK[options.minLevel]) return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields });
  if (level === "error" || level === "warn" || options.stderrOnly) process.stderr.write(line + "\n");
  else process.stdout.write(line + "\n");
}

export const log = {
  debug: (msg: string, fields?: Fields) => write("debug", msg, fields),
  info: (msg: string, fields?: Fields) => write("info", msg, fields),
  warn: (msg: string, fields?: Fields) => write("warn", msg, fields),
  error: (msg: string, fields?: Fields) => write("error", msg, fields),
};

/** Keeps a long-running process alive and visible when a promise rejection escapes a handler. */
export function logUnhandled(): void {
  process.on("unhandledRejection", (reason) => write("error", "unhandled rejection", { error: reason instanceof Error ? reason.message : String(reason) }));
  process.on("uncaughtException", (e) => write("error", "uncaught exception", { error: e.message }));
}
