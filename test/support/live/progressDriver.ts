/**
 * Drives the terminal progress display the way a run does, in a process of its own under a pseudo-terminal (see
 * test/e2e/cli/liveProgress.test.ts): two accounts page through streams while section headers, log lines and a
 * table are printed, one account ends early, a name and a log line are longer than any terminal. It prints
 * `DRIVER DONE` after the display is taken down.
 */
import { Effect, Layer, Logger } from "effect"
import { ProgressTerminal } from "../../../src/cli/live/ProgressTerminal.js"
import { terminalLogger } from "../../../src/observability/logging.js"
import { Progress, type ProgressSnapshot } from "../../../src/run/Progress.js"
import { zeroCounts } from "../../../src/run/Runs.js"

const accounts = [
  { accountId: "acc-1", accountName: "Northwind Landscaping", streams: ["users", "jobs", "invoices"], rows: 300 },
  { accountId: "acc-2", accountName: `Bluebird Plumbing & Heating of the Very Long Name Incorporated ${"x".repeat(150)}`, streams: ["users", "jobs"], rows: 200 }
]

const snapshot = (a: (typeof accounts)[number], stream: string, i: number, rows: number, done?: string): ProgressSnapshot => ({
  accountId: a.accountId,
  accountName: a.accountName,
  stream,
  streamNumber: i + 1,
  streams: a.streams.length,
  kind: "full",
  runId: 1,
  counts: { ...zeroCounts, rows, pages: Math.ceil(rows / 50), costPoints: rows * 90, throttleWaitMs: rows * 10 },
  startedAtMs: Date.now() - 2000,
  expectedRows: a.rows,
  landedBefore: 0,
  pointsPerRow: 90,
  requestedPointsPerRow: 360,
  bucket: { restoreRate: 500, available: 1000 },
  ...(done ? { done } : {})
})

const program = Effect.gen(function* () {
  const progress = yield* Progress
  const pause = Effect.sleep("60 millis")
  console.log("== section 1: backfill")
  for (let step = 0; step <= 6; step++) {
    for (const [k, a] of accounts.entries()) {
      const i = Math.min(step >> 1, a.streams.length - 1)
      const rows = Math.min(a.rows, step * 50)
      if (k === 1 && step === 5) {
        yield* progress.report(snapshot(a, a.streams[i]!, i, rows, "succeeded"))
        yield* progress.accountEnded(a.accountId)
        console.log(`== ${a.accountName.slice(0, 30)} ended at step ${step}`)
        continue
      }
      if (k === 1 && step > 5) continue
      yield* progress.report(snapshot(a, a.streams[i]!, i, rows))
    }
    yield* Effect.logInfo(`log line ${step}: ${"a long log message ".repeat(step === 3 ? 12 : 1)}`)
    console.log(`printed line ${step}`)
    yield* pause
  }
  // a last page, the stream's end and the account's end at once, as a run reports them: ink holds back the frames
  // within its frame interval, and the held-back one must not outlive the display
  yield* progress.report(snapshot(accounts[0]!, "invoices", 2, 299))
  yield* progress.report(snapshot(accounts[0]!, "invoices", 2, 300, "succeeded"))
  yield* progress.accountEnded("acc-1")
  console.log(["ACCOUNT  ROWS", "north    300", "blue     200"].join("\n"))
  console.log("== section 2: after the run")
})

await Effect.runPromise(
  program.pipe(Effect.provide(Layer.merge(ProgressTerminal, Logger.replace(Logger.defaultLogger, terminalLogger(false)))), Effect.scoped)
)
console.log("DRIVER DONE")
