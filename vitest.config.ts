import { defineConfig } from "vitest/config";
import path from "node:path";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // Integration suites start real servers and share the machine's two cores.
    fileParallelism: false,
    // expect.poll waits for browser pages and workers: 1 s (the default) is too short on a loaded machine
    expect: { poll: { timeout: 15_000, interval: 100 } },
    reporters: ["default"],
  },
});
