/**
 * onnxruntime-node sessions, created once per process and model file and reused. CPU by default;
 * the CUDA execution provider is tried first when OBSCURA_CUDA=1 (or auto-detected through
 * /proc/driver/nvidia), falling back to CPU. Threads: OBSCURA_ONNX_THREADS (default: all cores).
 */
import fs from "node:fs";
import os from "node:os";
import * as ort from "onnxruntime-node";
import { log } from "../log";

const KEY = Symbol.for("obscura.onnx.sessions");
type Cache = Map<string, Promise<ort.InferenceSession>>;

function cache(): Cache {
  const g = globalThis as { [KEY]?: Cache };
  return (g[KEY] ??= new Map());
}

function wantCuda(): boolean {
  if (process.env.OBSCURA_CUDA === "0") return false;
  if (process.env.OBSCURA_CUDA === "1") return true;
  return fs.existsSync("/proc/driver/nvidia/version");
}

export function onnxThreads(): number {
  const n = Number(process.env.OBSCURA_ONNX_THREADS);
  return Number.isInteger(n) && n > 0 ? n : Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
}

async function create(file: string): Promise<ort.InferenceSession> {
  const base: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: onnxThreads(),
    interOpNumThreads: 1,
    graphOptimizationLevel: "all",
    executionMode: "sequential",
    // Spinning threads steal the other core from ffmpeg and the web server on small machines.
    extra: { session: { intra_op: { allow_spinning: "0" } } },
  };
  if (wantCuda()) {
    try {
      const s = await ort.InferenceSession.create(file, { ...base, executionProviders: ["cuda", "cpu"] });
      log.info("onnx session", { model: file.split("/").pop(), provider: "cuda" });
      return s;
    } catch (e) {
      log.warn("CUDA execution provider unavailable; using CPU", { error: (e as Error).message });
    }
  }
  const s = await ort.InferenceSession.create(file, { ...base, executionProviders: ["cpu"] });
  log.debug("onnx session", { model: file.split("/").pop(), provider: "cpu", threads: base.intraOpNumThreads });
  return s;
}

/** The shared session for a model file. */
export function session(file: string): Promise<ort.InferenceSession> {
  const c = cache();
  let s = c.get(file);
  if (!s) {
    s = create(file).catch((e) => {
      c.delete(file);
      throw e;
    });
    c.set(file, s);
  }
  return s;
}

export { ort };
