import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runCli } from "../../support/cli.js"

it.effect("a worker on the embedded database says it needs a Postgres server and exits 2, touching nothing", () =>
  Effect.gen(function* () {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "account-sync-worker-"))
    const result = yield* runCli(["worker"], { DATA_DIR: dataDir })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("needs a Postgres server (set DATABASE_URL)")
    expect(fs.readdirSync(dataDir)).toEqual([])
    fs.rmSync(dataDir, { recursive: true, force: true })
  }), 60_000)
