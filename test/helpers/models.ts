/**
 * A throwaway OBSCURA_DATA_DIR for tests of the vision models, seeded with the converted models
 * of the repo's own cache (./data/models) when present, so tests skip re-converting them. Call at
 * the top of a test file: registers beforeAll/afterAll that set and restore the variable.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { resetConfig } from "@/server/config";

export function useModelDataDir(prefix: string, models: RegExp = /-[0-9a-f]{12}\.onnx$/): { dir: () => string } {
  let dataDir = "";
  const saved = process.env.OBSCURA_DATA_DIR;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `obscura-${prefix}-`));
    const cached = path.join(process.cwd(), "data", "models");
    if (fs.existsSync(cached)) {
      fs.mkdirSync(path.join(dataDir, "models"), { recursive: true });
      for (const f of fs.readdirSync(cached)) if (models.test(f)) fs.copyFileSync(path.join(cached, f), path.join(dataDir, "models", f));
    }
    process.env.OBSCURA_DATA_DIR = dataDir;
    resetConfig();
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.OBSCURA_DATA_DIR;
    else process.env.OBSCURA_DATA_DIR = saved;
    resetConfig();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return { dir: () => dataDir };
}
