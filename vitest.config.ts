import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/secretScan.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // integration suites share one Postgres and spawn servers: keep parallelism modest on 2 cores
    maxWorkers: 2,
    minWorkers: 1
  }
})
