import { Clock, Context, Effect, Layer } from "effect"
import type { RunCounts } from "./Runs.js"

export interface ProgressSnapshot {
  readonly accountId: string
  readonly stream: string
  readonly kind: string
  readonly runId: number
  readonly counts: RunCounts
  readonly startedAtMs: number
  readonly done?: string
}

export interface ProgressShape {
  readonly report: (snapshot: ProgressSnapshot) => Effect.Effect<void>
}

/** Where a run tells how it is doing: live lines on a terminal, structured log lines otherwise. */
export class Progress extends Context.Tag("account-sync/Progress")<Progress, ProgressShape>() {}

const rate = (rows: number, ms: number) => (ms > 0 ? Math.round((rows * 1000) / ms) : 0)

const line = (s: ProgressSnapshot, now: number) => {
  const c = s.counts
  return `${s.accountId} ${s.stream} (${s.kind}): ${c.rows} rows, ${c.pages} pages, ${rate(c.rows, now - s.startedAtMs)} rows/s, ${c.costPoints} points, throttle wait ${(c.throttleWaitMs / 1000).toFixed(1)} s${s.done ? ` - ${s.done}` : ""}`
}

/** JSON (or whatever the logger is) lines annotated with accountId, stream and runId. */
export const ProgressLog = Layer.succeed(
  Progress,
  Progress.of({
    report: (s) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.logInfo(s.done ? `${s.stream} ${s.done}` : `${s.stream} page landed`).pipe(
          Effect.annotateLogs({
            accountId: s.accountId,
            stream: s.stream,
            runId: s.runId,
            kind: s.kind,
            pages: s.counts.pages,
            rows: s.counts.rows,
            rowsPerSecond: rate(s.counts.rows, now - s.startedAtMs),
            points: s.counts.costPoints,
            throttleWaitMs: s.counts.throttleWaitMs
          })
        )
      )
  })
)

/** One live line per account on stderr, redrawn in place. */
export const ProgressTerminal = Layer.sync(Progress, () => {
  const lines = new Map<string, string>()
  let drawn = 0
  return Progress.of({
    report: (s) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          lines.set(s.accountId, line(s, now))
          const out = process.stderr
          if (drawn > 0) out.write(`\x1b[${drawn}A`)
          for (const l of lines.values()) out.write(`\x1b[2K${l}\n`)
          drawn = lines.size
        })
      )
  })
})

export const ProgressAuto = Layer.suspend(() => (process.stderr.isTTY ? ProgressTerminal : ProgressLog))
