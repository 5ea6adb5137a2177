import { defineConfig } from "vitest/config"
import LongestFirst from "./test/support/longestFirst.js"

/**
 * Three projects, all run by `npm test`:
 * - unit: pure rules, no database, no emulator, no child process (milliseconds each);
 * - integration: the connector or the emulator in this process against a real Postgres (a fresh schema per file);
 * - e2e: the program as a child process (CLI, demo, README walkthrough) and the smoke versions of bench and chaos.
 * `npm run test:unit` (or `vitest run --project unit`) runs one of them.
 */
export default defineConfig({
  test: {
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/secretScan.ts"],
    // twice the longest a test or a layer's setup took on one core (a CI machine was that slow, load ~12)
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // four files at once on 2 cores: the long e2e files mostly wait (a killed worker's heartbeat, a lease's expiry, a
    // throttled bucket), so two of them left the cores idle for half the run
    maxWorkers: 4,
    // Every pool runs file after file in processes (forks, the e2e files) or threads (integration, then unit) that
    // keep their modules (isolate false): a fresh process per file loaded effect, @effect/platform and the streams
    // again, 3-4 s of each file's time on this machine. The unit files share the integration threads, after them:
    // alone in a fork of their own they could only start once every e2e file had ended (vitest runs a single fork
    // last), ~10 s at the end of the run. As many threads and forks as they may use, kept: tinypool's idle removal
    // of one above the minimum rejects its teardown (an unhandled "Terminating worker thread" that fails the run).
    poolOptions: { threads: { isolate: false, minThreads: 4, maxThreads: 4 }, forks: { isolate: false, minForks: 4, maxForks: 4 } },
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], pool: "threads" } },
      { extends: true, test: { name: "integration", include: ["test/integration/**/*.test.ts"], pool: "threads" } },
      { extends: true, test: { name: "e2e", include: ["test/e2e/**/*.test.ts"] } }
    ]
  }
})
