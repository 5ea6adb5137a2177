import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import type { Connection } from "../../../src/auth/Connections.js"
import { connectionsTable, deletionLines, eventsTable, streamsTable, unmatchedLines } from "../../../src/cli/status.js"
import { renderSummary, runExit } from "../../../src/cli/summary.js"
import { loggerFor } from "../../../src/observability/logging.js"
import { zeroCounts } from "../../../src/run/Runs.js"
import type { AccountReport } from "../../../src/run/SyncRunner.js"

/** What text from outside carries to take over a terminal: clear the screen, retitle the window, fake a prompt, reverse the line. */
const name = "Evil\u001b[2J\u001b]0;owned\u0007 Ltd\r\nroot# \u202e"
const message = "GraphQL error: \u001b[31mboom\u001b[0m\u009b2J"
const id = "Z2lk\u001b[1A\u001b[2K"

/** Nothing that acts: no C0 control but the newline, no C1 control, no bidi override. */
const inert = (text: string) => {
  expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
  return text
}

const report: AccountReport = {
  accountId: id,
  accountName: name,
  outcome: "failed",
  message,
  streams: [{ stream: "jobs", kind: "full", outcome: "failed", resumed: false, counts: zeroCounts, durationMs: 5, error: message }]
}
const connection: Connection = {
  accountId: id,
  accountName: name,
  status: "revoked",
  statusReason: message,
  scopes: [],
  connectedAt: new Date(0),
  updatedAt: new Date(0),
  tokenExpiresAt: null
}
const lastRuns = new Map([[id, { stream: "jobs", kind: "full", outcome: "failed", startedAt: new Date(0), finishedAt: null }]])
const view = { now: 1000, wide: false, maxWidth: 120 }

describe("text from outside reaches a terminal or a log escaped, at every output boundary", () => {
  it("the run summary and its failed: lines", () => {
    for (const wide of [false, true]) expect(inert(renderSummary([report], { mode: "sync", durationMs: 5, wide, maxWidth: 120 }))).toContain("Evil\\u001b[2J")
    const { message: lines } = runExit([report])
    expect(inert(lines!)).toContain("GraphQL error: \\u001b[31mboom\\u001b[0m\\u009b2J")
    expect(lines).toContain("Z2lk\\u001b[1A\\u001b[2K")
  })

  it("status: connections, streams, change events, deliveries no connection matches", () => {
    for (const wide of [false, true]) {
      const v = { ...view, wide }
      expect(inert(connectionsTable([connection], lastRuns, v))).toContain("Evil\\u001b[2J")
      const stream = {
        accountId: id,
        stream: "jobs",
        inProgress: null,
        lastFullPassAt: null,
        nextFullPassAt: null,
        fullPassRequested: false,
        highWaterMark: null,
        lastRun: { kind: "full", outcome: "failed", startedAt: new Date(0), finishedAt: null, rows: 0, rowsWritten: 0, rowsDeleted: 0, costPoints: 0, overheadPoints: 0, error: message },
        deletionsUnchecked: message,
        rowsWithheld: 3
      }
      expect(inert(streamsTable([stream], [connection], v))).toContain("boom")
      expect(inert(deletionLines([stream], [connection], v))).toContain("Evil\\u001b[2J")
      expect(inert(deletionLines([stream], [connection], v))).toContain("\\u001b[31mboom")
      const events = { accountId: id, waiting: 1, waitingForReconnect: 0, oldestWaitingSince: null, lastApplied: { topic: "JOB_UPDATE", itemId: id, appliedAt: new Date(0) }, failed: 1, deferred: 0, lastError: message }
      expect(inert(eventsTable([events], [connection], v))).toContain("Evil")
    }
    expect(inert(unmatchedLines([{ sentAccountId: id, events: 2, lastReceivedAt: new Date(0) }]))).toContain("Z2lk\\u001b[1A")
  })

  it.effect("every log format: the message and the annotations", () =>
    Effect.gen(function* () {
      for (const format of ["pretty", "json", "logfmt"] as const) {
        const written: Array<string> = []
        const original = globalThis.console.error
        globalThis.console.error = (...args: Array<unknown>) => void written.push(args.map(String).join(" "))
        try {
          yield* Effect.logError(`account ${name} failed: ${message}`).pipe(
            Effect.annotateLogs({ accountId: id, error: message }),
            Effect.provide(Logger.replace(Logger.defaultLogger, loggerFor(format, false)))
          )
        } finally {
          globalThis.console.error = original
        }
        expect(written.length, format).toBe(1)
        inert(written[0]!.replace(/\n/g, ""))
        expect(written[0]).toContain("\\u001b")
        if (format === "json") expect(JSON.parse(written[0]!).message).toBe(`account ${name} failed: ${message}`)
      }
    })
  )
})
