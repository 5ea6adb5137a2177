import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Metric, Redacted } from "effect"
import { AccessTokens } from "../../../src/auth/AccessTokens.js"
import { makeSyncLayer } from "../../../src/cli/app.js"
import { ExitCodes } from "../../../src/cli/ExitCode.js"
import { apiVersionJson, apiVersionLines } from "../../../src/cli/status.js"
import { runExit } from "../../../src/cli/summary.js"
import * as Metrics from "../../../src/observability/metrics.js"
import { prometheusText } from "../../../src/observability/prometheus.js"
import { EventConsumer } from "../../../src/changes/EventConsumer.js"
import { Health } from "../../../src/health/Health.js"
import { ProgressLog } from "../../../src/run/Progress.js"
import { SyncRunner } from "../../../src/run/SyncRunner.js"
import { dayOf, nextVersion, nextVersionSchema, pinnedVersion } from "../../support/apiVersions.js"
import { makeLogCapture } from "../../support/auth.js"
import { withEnv } from "../../support/config.js"
import { connectAccount, TestSettings } from "../../support/connector.js"
import { TestEmulator } from "../../support/emulator.js"
import { eventStates, queueEvents } from "../../support/events.js"
import { jobScalarsStream } from "../../support/jobsOnly.js"
import { expectStreamExact } from "../../support/streamExactness.js"
import { syncHarness } from "../../support/syncHarness.js"

const day = 86_400

/** The log lines (logfmt) of `effect` as it runs, at every level. */
const logged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const logs = makeLogCapture()
    const result = yield* effect.pipe(Effect.provide(logs.layer))
    return { result, lines: logs.lines }
  })

/** The emulator serves the pinned version until `removedAt` (warning 30 days before) and the next one. */
const twoVersions = (removedAt: string) =>
  Effect.flatMap(TestEmulator, ({ admin }) =>
    admin.setApiVersions({ versions: [{ version: pinnedVersion, removedAt }, { version: nextVersion, schema: nextVersionSchema() }], warnDays: 30 })
  )

const snapshot = Effect.flatMap(Health, (h) => h.snapshot)

/** The account connected (once per file: the tests share the emulator and the database). */
const connected = (accountId: string) =>
  Effect.flatMap(Effect.either(Effect.flatMap(AccessTokens, (t) => t.get(accountId))), (token) => (token._tag === "Left" ? Effect.asVoid(connectAccount(accountId)) : Effect.void))

/** A token the emulator accepts now: its clock may have moved past the stored one's expiry, which the connector cannot see. */
const freshToken = (accountId: string) =>
  Effect.gen(function* () {
    const credentials = (yield* AccessTokens).credentials(accountId)
    return Redacted.value(yield* credentials.refreshAfterRejection(yield* credentials.token))
  })

/** The application configured like the harness's, with `overrides`: another process of the same deployment. */
const appWith = (overrides: Record<string, string>) =>
  Layer.unwrapEffect(Effect.map(TestSettings, (env) => makeSyncLayer({ progress: ProgressLog }).pipe(Layer.provide(withEnv({ ...env, ...overrides })))))

layer(syncHarness({ accounts: 1, jobs: 30 }), { timeout: 60_000, excludeTestServices: true })("the API version's lifecycle", (it) => {
  it.effect("the emulator: the header picks the version and its schema; one near removal warns; a removed or unknown one is answered by the oldest supported", () =>
    Effect.gen(function* () {
      const { accounts, admin, baseUrl } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      yield* connected(accountId)
      let token = yield* freshToken(accountId)
      const ask = (query: string, version?: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${baseUrl}/api/graphql`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...(version ? { "x-service-graphql-version": version } : {}) },
            body: JSON.stringify({ query })
          })
          return (await response.json()) as { data?: unknown; errors?: Array<{ message: string }>; extensions: { versioning?: { version: string; warning?: string } } }
        })
      const jobQuery = "{ jobs(first: 1) { nodes { id archivedAt } } }"

      // by default one version, answering every request and naming itself
      expect((yield* ask("{ account { id } }", pinnedVersion)).extensions.versioning).toEqual({ version: pinnedVersion })

      const { nowMs } = yield* admin.clock()
      const removal = dayOf(nowMs + 10 * day * 1000)
      yield* twoVersions(removal)
      expect(yield* admin.apiVersions()).toEqual({
        warnDays: 30,
        versions: [
          { version: pinnedVersion, removedAt: removal, status: "deprecated" },
          { version: nextVersion, status: "supported" }
        ]
      })
      const warning = `API version ${pinnedVersion} is deprecated and will be removed on ${removal}; move to a newer version`
      expect((yield* ask("{ account { id } }", pinnedVersion)).extensions.versioning).toEqual({ version: pinnedVersion, warning })
      expect((yield* ask("{ account { id } }", nextVersion)).extensions.versioning).toEqual({ version: nextVersion })
      // unknown, or no header: the oldest supported version answers, naming itself
      expect((yield* ask("{ account { id } }", "2024-01-01")).extensions.versioning).toEqual({ version: pinnedVersion, warning })
      expect((yield* ask("{ account { id } }")).extensions.versioning).toEqual({ version: pinnedVersion, warning })
      // each version answers with its own schema
      expect((yield* ask(jobQuery, pinnedVersion)).errors?.[0]?.message).toContain(`Cannot query field "archivedAt" on type "Job".`)
      expect((yield* ask(jobQuery, nextVersion)).data).toEqual({ jobs: { nodes: [{ id: expect.any(String), archivedAt: null }] } })

      // removed (on the emulator's clock): the request for it is silently answered by the oldest supported version
      yield* admin.advanceClock({ seconds: 11 * day })
      token = yield* freshToken(accountId)
      const removed = yield* ask(jobQuery, pinnedVersion)
      expect(removed.extensions.versioning).toEqual({ version: nextVersion })
      expect(removed.errors).toBeUndefined()
      expect((yield* admin.apiVersions()).versions[0]!.status).toBe("removed")

      // bad settings are refused, naming the version and what is wrong
      const bad = yield* Effect.flip(admin.setApiVersions({ versions: [{ version: nextVersion, schema: "type Query {" }] }))
      expect(bad.reason).toContain(`the schema of ${nextVersion} does not parse`)
      expect((yield* Effect.flip(admin.setApiVersions({ versions: [{ version: "2025-13-01" }] }))).reason).toContain('version "2025-13-01" is not a date')
      yield* admin.setApiVersions({ versions: [{ version: pinnedVersion }] })
    })
  )

  it.effect("a warning is logged once, counted per answer, recorded and shown by status and the gauges; the run goes on", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const { nowMs } = yield* admin.clock()
      const removal = dayOf(nowMs + 10 * day * 1000)
      yield* twoVersions(removal)
      yield* connected(accountId)
      // a valid token first: an answer refused for an expired one (401) carries no versioning
      yield* freshToken(accountId)
      const warnings = Metric.tagged(Metrics.apiVersionWarnings, "version", pinnedVersion)
      const counted = (yield* Metric.value(warnings)).count
      const requests = (yield* admin.stats()).graphqlRequests

      const { result: reports, lines } = yield* logged((yield* SyncRunner).run({ mode: "backfill" }))
      expect(reports[0]!.outcome).toBe("synced")
      expect(runExit(reports).code).toBe(ExitCodes.ok)
      yield* expectStreamExact(jobScalarsStream, accountId)
      // every answer carried it and was counted; the log says it once
      const answered = (yield* admin.stats()).graphqlRequests - requests
      expect(answered).toBeGreaterThan(1)
      expect((yield* Metric.value(warnings)).count - counted).toBe(answered)
      const warned = lines.filter((l) => l.includes(`the service warns about API version ${pinnedVersion}`))
      expect(warned).toHaveLength(1)
      expect(warned[0]).toContain(
        `message="the service warns about API version ${pinnedVersion}: API version ${pinnedVersion} is deprecated and will be removed on ${removal}; move to a newer version"`
      )
      expect(warned[0]).toContain("level=WARN")

      const health = yield* snapshot
      expect(apiVersionJson(health.apiVersion)).toMatchObject({ pinned: pinnedVersion, answered: pinnedVersion, replaced: false, warning: expect.stringContaining(removal) })
      expect(apiVersionLines(health.apiVersion)).toContain(`the service warns (since `)
      const text = yield* prometheusText
      expect(text).toMatch(new RegExp(`account_sync_api_version_warned_since_seconds\\{version="${pinnedVersion}"\\} \\d{10}`))
      expect(text).toContain(`account_sync_api_version_replaced{pinned="${pinnedVersion}",answered="${pinnedVersion}"} 0`)
    })
  )

  it.effect("once removed, the answer of another version fails the run (exit 4, status says which answered) and nothing of it lands; events wait", () =>
    Effect.gen(function* () {
      const { accounts, admin } = yield* TestEmulator
      const accountId = accounts[0]!.accountId
      const sql = yield* SqlClient.SqlClient
      yield* connected(accountId)
      const { nowMs } = yield* admin.clock()
      yield* twoVersions(dayOf(nowMs + 10 * day * 1000))
      const edited = (yield* admin.editRecords({ accountId, collection: "jobs", count: 3, seed: 11 })).ids
      const stored = () => sql<{ id: string; title: string | null }>`SELECT id, title FROM jobs WHERE account_id = ${accountId} ORDER BY id`
      const before = yield* stored()
      yield* admin.advanceClock({ seconds: 11 * day })

      const [report] = yield* (yield* SyncRunner).run({ mode: "sync" })
      expect(report).toMatchObject({ outcome: "failed", apiVersionReplaced: { pinned: pinnedVersion, answered: nextVersion } })
      expect(report!.message).toContain(`the service replaced the pinned API version ${pinnedVersion} (SERVICE_GRAPHQL_VERSION) with ${nextVersion}`)
      const exit = runExit([report!])
      expect(exit.code).toBe(ExitCodes.apiVersionReplaced)
      expect(exit.message).toContain(`set SERVICE_GRAPHQL_VERSION=${nextVersion}`)
      expect(exit.message).toContain("account-sync schema check")
      expect(yield* stored()).toEqual(before)
      const [run] = yield* sql<{ outcome: string; error: string }>`SELECT outcome, error FROM sync_runs WHERE account_id = ${accountId} ORDER BY id DESC LIMIT 1`
      expect(run!.outcome).toBe("failed")
      expect(run!.error).toContain(`replaced the pinned API version ${pinnedVersion}`)

      const health = yield* snapshot
      expect(apiVersionJson(health.apiVersion)).toMatchObject({ answered: nextVersion, replaced: true })
      expect(apiVersionLines(health.apiVersion)).toContain(`REPLACED by the service: ${pinnedVersion} is no longer supported and ${nextVersion} answers instead`)
      expect(health.accounts[0]!.failuresInARow).toBeGreaterThanOrEqual(1)
      expect(yield* prometheusText).toContain(`account_sync_api_version_replaced{pinned="${pinnedVersion}",answered="${nextVersion}"} 1`)

      // the change events wait for the pin to move: none failed, no attempt spent
      yield* queueEvents(accountId, [{ topic: "JOB_UPDATE", itemId: edited[0]!, occurredAt: new Date(nowMs).toISOString() }])
      expect((yield* (yield* EventConsumer).drain(accountId)).outcome).toBe("api-version-replaced")
      expect(yield* eventStates(accountId)).toEqual({ pending: 1 })
      const [attempts] = yield* sql<{ attempts: number }>`SELECT attempts FROM webhook_events WHERE account_id = ${accountId}`
      expect(attempts!.attempts).toBe(0)

      // allowed by the operator: the run goes on with the version the service chose, and lands what it answered
      const allowed = yield* logged(Effect.flatMap(SyncRunner, (r) => r.run({ mode: "sync" })).pipe(Effect.provide(appWith({ SERVICE_GRAPHQL_VERSION_REPLACED: "allow" }))))
      expect(allowed.result[0]!.outcome).toBe("synced")
      expect(allowed.lines.some((l) => l.includes(`going on, as SERVICE_GRAPHQL_VERSION_REPLACED=allow says`))).toBe(true)
      yield* expectStreamExact(jobScalarsStream, accountId)

      // the pin moved to the version that answers: no replacement, no warning
      const moved = Effect.gen(function* () {
        const [r] = yield* (yield* SyncRunner).run({ mode: "sync" })
        return { report: r!, health: yield* snapshot }
      }).pipe(Effect.provide(appWith({ SERVICE_GRAPHQL_VERSION: nextVersion })))
      const { report: after, health: movedHealth } = yield* moved
      expect(after.outcome).toBe("synced")
      expect(apiVersionJson(movedHealth.apiVersion)).toMatchObject({ pinned: nextVersion, answered: nextVersion, replaced: false, warning: null })
      yield* admin.setApiVersions({ versions: [{ version: pinnedVersion }] })
    })
  )
})
