/**
 * Starts the real server (`scripts/start.ts`) or a worker (`scripts/worker.ts`) as child processes
 * on loopback, each with its own data dir, and a throwaway PostgreSQL database when asked.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "./storage-servers";

export const ROOT = path.resolve(import.meta.dirname, "..", "..");
export const TOKEN = "test-token-" + Math.random().toString(36).slice(2);

export interface Proc {
  proc: ChildProcess;
  logs: string[];
  /** Resolves when a log line matches. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
  kill(): void;
}

function spawnScript(script: string, env: Record<string, string>): Proc {
  const proc = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: "production", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  const waiters: Array<{ re: RegExp; resolve: (l: string) => void }> = [];
  const onData = (buf: Buffer) => {
    for (const line of buf.toString("utf8").split("\n")) {
      if (!line) continue;
      logs.push(line);
      if (process.env.OBSCURA_TEST_VERBOSE) process.stderr.write(`[${path.basename(script)}] ${line}\n`);
      for (const w of [...waiters]) {
        if (w.re.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  };
  proc.stdout!.on("data", onData);
  proc.stderr!.on("data", onData);
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  return {
    proc,
    logs,
    waitFor(re, timeoutMs = 120_000) {
      const hit = logs.find((l) => re.test(l));
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${re} in ${script}; last logs:\n${logs.slice(-20).join("\n")}`)), timeoutMs);
        waiters.push({ re, resolve: (l) => (clearTimeout(t), resolve(l)) });
        proc.once("exit", (code) => {
          clearTimeout(t);
          reject(new Error(`${script} exited (${code}) before ${re}; last logs:\n${logs.slice(-30).join("\n")}`));
        });
      });
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode) return;
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(t);
    },
    kill() {
      proc.kill("SIGKILL");
    },
  };
}

export function tempDir(prefix: string): string {
  fs.mkdirSync(path.join(ROOT, ".test-tmp"), { recursive: true });
  return fs.mkdtempSync(path.join(ROOT, ".test-tmp", prefix + "-"));
}

export interface TestServer extends Proc {
  url: string;
  dataDir: string;
  api(method: string, p: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  waitDone(name: string, timeoutMs?: number): Promise<any>;
}

export async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  const port = await freePort();
  const dataDir = env.OBSCURA_DATA_DIR ?? tempDir("server");
  const p = spawnScript("scripts/start.ts", {
    PORT: String(port),
    HOST: "127.0.0.1",
    OBSCURA_DATA_DIR: dataDir,
    OBSCURA_API_TOKEN: TOKEN,
    OBSCURA_SUPERVISE_INTERVAL_SECONDS: "2",
    OBSCURA_WEBHOOK_PROGRESS_SECONDS: "1",
    // the vehicle models load on the first vehicle request, not at every test server's start
    OBSCURA_VEHICLE_WARMUP: "lazy",
    ...env,
  });
  await p.waitFor(/Obscura listening/, 240_000);
  const url = `http://127.0.0.1:${port}`;
  const api: TestServer["api"] = async (method, pth, body, headers = {}) => {
    const res = await fetch(url + pth, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return {
    ...p,
    url,
    dataDir,
    api,
    async waitDone(name, timeoutMs = 120_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const r = await api("GET", `/api/v1/${name}`);
        if (r.status !== 200) throw new Error(`GET ${name} answered ${r.status}: ${JSON.stringify(r.body)}`);
        if (r.body.done) return r.body;
        if (Date.now() > until) throw new Error(`operation ${name} not done after ${timeoutMs} ms: ${JSON.stringify(r.body)}`);
        await new Promise((r) => setTimeout(r, 300));
      }
    },
  };
}

export function startWorker(env: Record<string, string>): Proc {
  return spawnScript("scripts/worker.ts", {
    OBSCURA_DATA_DIR: env.OBSCURA_DATA_DIR ?? tempDir("worker"),
    OBSCURA_SUPERVISE_INTERVAL_SECONDS: "2",
    ...env,
  });
}

/** A fresh database on the PostgreSQL server at 127.0.0.1:5432, dropped by `drop()`. */
export async function tempPostgres(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.OBSCURA_TEST_PG_ADMIN ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `obscura_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  const u = new URL(admin);
  u.pathname = "/" + name;
  return {
    url: u.toString(),
    async drop() {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`drop database if exists ${name} with (force)`);
      await d.end();
    },
  };
}

export const tmpdir = os.tmpdir();

export function fileUri(p: string): string {
  return "file://" + path.resolve(p).split(path.sep).map(encodeURIComponent).join("/");
}

/** Signs in through Auth.js's own endpoints like a browser form would; returns the cookie header. */
export async function signIn(url: string, username: string, password: string): Promise<string> {
  const csrf = await fetch(`${url}/api/auth/csrf`);
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  };
  keep(csrf);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const res = await fetch(`${url}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookie() },
    body: new URLSearchParams({ csrfToken, username, password, callbackUrl: url + "/" }),
  });
  keep(res);
  if (![...jar.keys()].some((k) => k.includes("session-token"))) throw new Error(`sign-in of ${username} failed: ${res.status} ${res.headers.get("location")}`);
  return cookie();
}
