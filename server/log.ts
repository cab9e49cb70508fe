/**
 * Structured logging: one JSON line per event on stdout/stderr. Never pass secrets (tokens,
 * passwords, SAS signatures) in fields; URIs go through storage's redactUri first.
 */
type Fields = Record<string, unknown>;

function write(level: "debug" | "info" | "warn" | "error", msg: string, fields?: Fields) {
  if (level === "debug" && !process.env.OBSCURA_DEBUG) return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields });
  if (level === "error" || level === "warn") process.stderr.write(line + "\n");
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
