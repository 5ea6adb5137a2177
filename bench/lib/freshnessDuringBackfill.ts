import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import type { EmulatorAdmin } from "../../src/emulator/EmulatorAdmin.js"
import { BenchError } from "./errors.js"
import { quantile } from "./quantile.js"

/**
 * Freshness of accounts mid-backfill: edits at the service to rows a running backfill already landed, delivered by the
 * service's webhooks to serve (beside workers), and the lag from each edit to its row landed (synced_at), counted
 * only where the account's backfill run was still running when the row landed: the pass applies its account's events
 * between two pages (sync/events/betweenPages.ts) instead of leaving them to an events job behind the backfill.
 */
export interface DuringBackfillResult {
  readonly edits: number
  /** Edits whose row landed while the account's backfill was still running: the lags below are theirs. */
  readonly landedMidBackfill: number
  readonly p50Seconds: number
  readonly p99Seconds: number
  readonly maxSeconds: number
}

const editsPerSecond = 2
const mostEdits = 30
const gapLimitMs = 30_000


/** `accounts` are being backfilled by workers, with serve receiving the service's webhooks for them. */
export const duringBackfillLags = (admin: EmulatorAdmin, accounts: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const running = Effect.map(
      sql<{ account_id: string }>`SELECT DISTINCT account_id FROM sync_runs WHERE kind = 'full' AND outcome = 'running' AND account_id IN ${sql.in(accounts)}`,
      (rows) => rows.map((r) => r.account_id)
    )
    const edits: Array<{ readonly accountId: string; readonly id: string; readonly atMs: number }> = []
    const started = performance.now()
    for (let k = 0; k < mostEdits && accounts.length > 0; k++) {
      const wait = started + (k * 1000) / editsPerSecond - performance.now()
      if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
      // a stream's run ends before the next one's begins, and a slice's before its follow-up's: a moment with no run
      // is not the backfills' end unless it lasts
      let midBackfill = yield* running
      for (const gapStarted = performance.now(); midBackfill.length === 0 && performance.now() - gapStarted < gapLimitMs; ) {
        yield* Effect.sleep(Duration.millis(200))
        midBackfill = yield* running
      }
      if (midBackfill.length === 0) break
      const accountId = midBackfill[k % midBackfill.length]!
      const [row] = yield* sql<{ id: string }>`SELECT id FROM jobs WHERE account_id = ${accountId} ORDER BY md5(id || ${String(k)}) LIMIT 1`
      if (row === undefined) continue
      const atMs = Date.now()
      yield* admin.editRecords({ accountId, collection: "jobs", ids: [row.id], seed: 70_000 + k })
      edits.push({ accountId, id: row.id, atMs })
    }
    if (edits.length === 0) {
      const runs = yield* sql<{ account_id: string; stream: string; kind: string; outcome: string; rows: number; seconds: number }>`
        SELECT account_id, stream, kind, outcome, rows, extract(epoch FROM coalesce(finished_at, now()) - started_at)::float8 AS seconds
        FROM sync_runs WHERE account_id IN ${sql.in(accounts)} ORDER BY id`
      const seen = runs.map((r) => `${r.account_id} ${r.stream} ${r.kind} ${r.outcome} ${r.rows} rows in ${r.seconds.toFixed(1)} s`).join("; ")
      return yield* new BenchError({
        step: "freshness during a backfill",
        reason: `no load account was mid-backfill for ${gapLimitMs / 1000} s: make its backfill longer (--burst-load-jobs); its runs: ${seen || "none"}`
      })
    }

    // each edited row as the service has it now, and when it landed
    const landed = Effect.gen(function* () {
      const out: Array<{ readonly accountId: string; readonly id: string; readonly atMs: number; readonly syncedAt: Date }> = []
      for (const accountId of new Set(edits.map((e) => e.accountId))) {
        const mine = edits.filter((e) => e.accountId === accountId)
        const ids = [...new Set(mine.map((e) => e.id))]
        // the edited jobs only: listing the whole account (tens of thousands of jobs, every 100 ms while this waits)
        // held the emulator's event loop for seconds, stalling the pages and reads whose lag is measured
        const service = new Map((yield* admin.listRecords({ accountId, collection: "jobs", ids })).map((j) => [String(j.id), Date.parse(String(j.updatedAt))]))
        const rows = yield* sql<{ id: string; updatedAt: Date; syncedAt: Date }>`
          SELECT id, updated_at AS "updatedAt", synced_at AS "syncedAt" FROM jobs WHERE account_id = ${accountId} AND id IN ${sql.in(ids)}`
        for (const r of rows) {
          if (r.updatedAt.getTime() !== service.get(r.id)) continue
          // a row edited twice: its last edit's lag
          const e = mine.filter((m) => m.id === r.id).at(-1)!
          out.push({ accountId, id: r.id, atMs: e.atMs, syncedAt: r.syncedAt })
        }
      }
      return out
    })
    const distinct = new Set(edits.map((e) => `${e.accountId}|${e.id}`)).size
    const limitMs = 120_000
    const waitStarted = performance.now()
    let rows = yield* landed
    while (rows.length < distinct) {
      if (performance.now() - waitStarted > limitMs) return yield* new BenchError({ step: "freshness during a backfill", reason: `${distinct - rows.length} edited row(s) not landed within ${limitMs / 1000} s` })
      yield* Effect.sleep(Duration.millis(100))
      rows = yield* landed
    }
    const lags: Array<number> = []
    for (const r of rows) {
      const [run] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM sync_runs WHERE account_id = ${r.accountId} AND kind = 'full' AND started_at <= ${r.syncedAt}
          AND (finished_at IS NULL OR finished_at >= ${r.syncedAt})`
      if ((run?.n ?? 0) > 0) lags.push((r.syncedAt.getTime() - r.atMs) / 1000)
    }
    return {
      edits: edits.length,
      landedMidBackfill: lags.length,
      p50Seconds: quantile(lags, 0.5),
      p99Seconds: quantile(lags, 0.99),
      maxSeconds: lags.length === 0 ? Number.NaN : Math.max(...lags)
    } satisfies DuringBackfillResult
  })
