import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ExitCodes } from "../../../src/cli/ExitCode.js"
import { breakingSchema, dayOf, nextVersion, nextVersionSchema, pinnedVersion } from "../../support/apiVersions.js"
import { runCli } from "../../support/cli.js"
import { connectAccount, TestSettings } from "../../support/connector.js"
import { TestDatabase } from "../../support/database.js"
import { TestEmulator } from "../../support/emulator.js"
import { syncHarness } from "../../support/syncHarness.js"

const day = 86_400

/** The JSON log lines of a run whose message contains `text`. */
const logLines = (stderr: string, text: string) =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { message: unknown })
    .filter((l) => String(l.message).includes(text))

layer(syncHarness({ accounts: 1, jobs: 20 }), { timeout: 120_000, excludeTestServices: true })("moving the API version pin, end to end (child processes)", (it) => {
  it.effect("warned, then replaced (exit 4, status says which version answered), checked with `schema check`, then moved", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connectAccount(accountId)
      const env = { ...(yield* TestDatabase).env, ...(yield* TestSettings) }
      const { nowMs } = yield* admin.clock()
      const removal = dayOf(nowMs + 10 * day * 1000)
      yield* admin.setApiVersions({ versions: [{ version: pinnedVersion, removedAt: removal }, { version: nextVersion, schema: nextVersionSchema() }], warnDays: 30 })

      // near removal: the run succeeds, the warning is logged once, status shows it
      const warned = yield* runCli(["sync"], env)
      expect(warned.code, warned.stderr).toBe(ExitCodes.ok)
      expect(logLines(warned.stderr, `the service warns about API version ${pinnedVersion}`)).toHaveLength(1)
      const status = yield* runCli(["status"], env)
      expect(status.code, status.stderr).toBe(0)
      expect(status.stdout).toContain(`API version ${pinnedVersion} (SERVICE_GRAPHQL_VERSION): answered by ${pinnedVersion}`)
      expect(status.stdout).toContain(`will be removed on ${removal}`)
      const json = JSON.parse((yield* runCli(["status", "--json"], env)).stdout) as { apiVersion: Record<string, unknown> }
      expect(json.apiVersion).toMatchObject({ pinned: pinnedVersion, answered: pinnedVersion, replaced: false, warning: expect.stringContaining(removal) })

      // removed: the service silently answers with the next version; the run fails with its own exit code and says what to do
      yield* admin.advanceClock({ seconds: 11 * day })
      const replaced = yield* runCli(["sync"], env)
      expect(replaced.code, replaced.stderr).toBe(ExitCodes.apiVersionReplaced)
      expect(replaced.stderr).toContain(`the service replaced the pinned API version ${pinnedVersion} (SERVICE_GRAPHQL_VERSION) with ${nextVersion}`)
      expect(replaced.stderr).toContain("account-sync schema check SCHEMA.graphql")
      const after = yield* runCli(["status"], env)
      expect(after.stdout).toContain(`REPLACED by the service: ${pinnedVersion} is no longer supported and ${nextVersion} answers instead`)

      // the check before moving: the next version's schema breaks nothing; one without Job.title would
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "account-sync-schema-"))
      const next = path.join(dir, "next.graphql")
      fs.writeFileSync(next, nextVersionSchema())
      const ok = yield* runCli(["schema", "check", next], {})
      expect(ok.code, ok.stderr).toBe(0)
      expect(ok.stdout).toMatch(/checked \d+ documents the program sends/)
      expect(ok.stdout).toContain("JobStatusTypeEnum gains `paused`")
      expect(ok.stdout).toContain("nothing breaks")
      const broken = path.join(dir, "broken.graphql")
      fs.writeFileSync(broken, breakingSchema())
      const breaks = yield* runCli(["schema", "check", broken], {})
      expect(breaks.code).toBe(ExitCodes.failure)
      expect(breaks.stdout).toMatch(/Job\.title +removed from Job +yes +the service refuses the whole query +jobs page/)
      expect(breaks.stderr).toContain("the program needs changing before the pin moves")
      const unreadable = path.join(dir, "unreadable.graphql")
      fs.writeFileSync(unreadable, "type Query {")
      const bad = yield* runCli(["schema", "check", unreadable], {})
      expect(bad.code).toBe(ExitCodes.usage)
      expect(bad.stderr).toContain(`schema check: ${unreadable}: Syntax Error`)

      // the pin moved: the run succeeds, answered by the version asked for, no warning
      const moved = { ...env, SERVICE_GRAPHQL_VERSION: nextVersion }
      const synced = yield* runCli(["sync"], moved)
      expect(synced.code, synced.stderr).toBe(ExitCodes.ok)
      expect(logLines(synced.stderr, "warns about API version")).toHaveLength(0)
      const movedStatus = yield* runCli(["status"], moved)
      expect(movedStatus.stdout).toContain(`API version ${nextVersion} (SERVICE_GRAPHQL_VERSION): answered by ${nextVersion}`)
      expect(movedStatus.stdout).not.toContain("REPLACED")
      expect(movedStatus.stdout).not.toContain("the service warns")
    })
  )
})
