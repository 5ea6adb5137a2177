import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Faults of a `worker` child seen through the account leases (src/sync/AccountLeases.ts): a worker's sessions carry
 * `<name> worker <host>:<pid>`, and a lease's holder is its session's name and backend pid.
 */
const holderOf = (pid: number) => `% worker %:${pid} (pid %`

/** The leases worker `pid` holds now (unexpired): each account and the lease's epoch. */
const leasesHeldBy = (pid: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.orDie(
      sql<{ account_id: string; epoch: number }>`SELECT account_id, epoch::float8 AS epoch FROM account_leases WHERE holder LIKE ${holderOf(pid)} AND expires_at > now() ORDER BY 1`
    )
  )

/** The accounts whose lease worker `pid` holds now (unexpired). */
export const accountsHeldBy = (pid: number) => Effect.map(leasesHeldBy(pid), (leases) => leases.map((l) => l.account_id))

/**
 * The accounts whose lease worker `pid` took last and has not released, expired or not: what it was working on, where
 * nothing else ends a lease (no backend terminated). On a loaded machine (load 12 in CI) a live worker's renewal can
 * come late, and the account is still its own.
 */
export const accountsLeasedTo = (pid: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.orDie(sql<{ account_id: string }>`SELECT account_id FROM account_leases WHERE holder LIKE ${holderOf(pid)} AND expires_at <> '-infinity' ORDER BY 1`),
      (rows) => rows.map((r) => r.account_id)
    )
  )

/**
 * Of `leases` (held by worker `pid`), those another process has taken since: a later epoch under another holder,
 * whether that holder still has it or has already released it (a taker that finds the account revoked, or its pass
 * at its last page, takes and releases the lease between two looks).
 */
const takenSince = (pid: number, leases: ReadonlyArray<{ readonly account_id: string; readonly epoch: number }>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.orDie(
        sql<{ account_id: string; epoch: number }>`
          SELECT account_id, epoch::float8 AS epoch FROM account_leases
          WHERE account_id IN ${sql.in(leases.map((l) => l.account_id))} AND holder NOT LIKE ${holderOf(pid)}`
      ),
      (rows) => leases.filter((l) => rows.some((r) => r.account_id === l.account_id && r.epoch > l.epoch)).length
    )
  )

/** Seconds (wall, from `since`) until `check` holds, polled every 200 ms; undefined after `maxSeconds`. */
export const secondsUntil = <E, R>(since: number, maxSeconds: number, check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function* () {
    while (!(yield* check)) {
      if (performance.now() - since > maxSeconds * 1000) return undefined
      yield* Effect.sleep("200 millis")
    }
    return (performance.now() - since) / 1000
  })

export interface Hang {
  readonly accounts: ReadonlyArray<string>
  /** From SIGSTOP until another worker had taken the lease of every one of them; undefined when not within the bound. */
  readonly releaseSeconds: number | undefined
  /** When not taken within the bound: what `onStall` found then, before the SIGCONT. */
  readonly stall?: string
}

/**
 * The workers' Postgres sessions (what each is doing or waiting on, for how long, who blocks it) and the account
 * queue's monitor claim: what a failover that did not come was waiting for (the accounts' jobs: whyNotRunAgain).
 */
export const stallSnapshot = (queueSchema: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const sessions = yield* Effect.orDie(sql<{ line: string }>`
      SELECT format('%s [%s] %s %s/%s xact %s s, query %s s, blocked by %s: %s', application_name, pid, state, wait_event_type, wait_event,
        round(extract(epoch FROM now() - xact_start)::numeric, 1), round(extract(epoch FROM now() - query_start)::numeric, 1),
        pg_blocking_pids(pid), left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 160)) AS line
      FROM pg_stat_activity WHERE application_name LIKE '% worker %' AND datname = current_database() ORDER BY application_name, pid`)
    const monitor = yield* Effect.orDie(sql<{ line: string }>`
      SELECT format('queue %s: monitor_on %s s ago, monitor_claim_on %s s ago', name, round(extract(epoch FROM now() - monitor_on)::numeric, 1),
        round(extract(epoch FROM now() - monitor_claim_on)::numeric, 1)) AS line
      FROM ${sql(queueSchema)}.queue WHERE name = 'account-work'`)
    return [...monitor, ...sessions].map((r) => r.line).join("\n  ")
  })

const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig)
  } catch {
    // gone already
  }
}

/**
 * SIGSTOP of worker `pid` (a hung process: its sessions stay open, its leases stop being renewed) until another worker
 * has taken the lease of every account it held, at most `maxSeconds`, then SIGCONT: it comes back with what it had in
 * flight. `after` runs between the move and the SIGCONT. Always resumed, whatever happens meanwhile.
 */
export const hangUntilTaken = <E = never, R = never, R2 = never>(
  pid: number,
  maxSeconds: number,
  after: Effect.Effect<void, E, R> = Effect.void,
  onStall: (accounts: ReadonlyArray<string>) => Effect.Effect<string, never, R2> = () => Effect.succeed("")
) =>
  Effect.gen(function* () {
    const leases = yield* leasesHeldBy(pid)
    const accounts = leases.map((l) => l.account_id)
    if (accounts.length === 0) return { accounts, releaseSeconds: undefined } satisfies Hang
    const stoppedAt = performance.now()
    signal(pid, "SIGSTOP")
    const releaseSeconds = yield* secondsUntil(stoppedAt, maxSeconds, Effect.map(takenSince(pid, leases), (n) => n === leases.length))
    const stall = releaseSeconds === undefined ? yield* onStall(accounts) : undefined
    yield* after
    return { accounts, releaseSeconds, ...(stall ? { stall } : {}) } satisfies Hang
  }).pipe(Effect.ensuring(Effect.sync(() => signal(pid, "SIGCONT"))))

/** Backfill jobs of the queue running (active) and waiting their turn under the cap (created or to retry). */
export const backfillsUnderCap = (queueSchema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      Effect.orDie(sql<{ running: number; waiting: number }>`
        SELECT count(*) FILTER (WHERE state = 'active')::int AS running, count(*) FILTER (WHERE state IN ('created', 'retry'))::int AS waiting
        FROM ${sql(queueSchema)}.job WHERE name = 'account-work' AND data->>'kind' = 'backfill'`),
      (rows) => rows[0] ?? { running: 0, waiting: 0 }
    )
  )

/** Seconds from `since` (a database time) until each of `accounts` had a run started after it: the slowest, or undefined after `maxSeconds`. */
export const runAgainSeconds = (accounts: ReadonlyArray<string>, since: Date, maxSeconds: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const again = Effect.orDie(sql<{ account_id: string; seconds: number }>`
      SELECT account_id, extract(epoch FROM min(started_at) - ${since}::timestamptz)::float8 AS seconds FROM sync_runs
      WHERE started_at > ${since}::timestamptz AND outcome <> 'skipped' AND account_id IN ${sql.in(accounts)} GROUP BY account_id`)
    const done = yield* secondsUntil(performance.now(), maxSeconds, Effect.map(again, (rows) => rows.length === accounts.length))
    if (done === undefined) return undefined
    return Math.max(...(yield* again).map((r) => r.seconds))
  })

/**
 * Of `accounts`, those with work left in the queue `queueSchema` (a job created, retrying or active). An account whose
 * backfill ended just as its worker was killed has none: it runs again when next due, not in a failover.
 */
export const withWorkLeft = (queueSchema: string, accounts: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    accounts.length === 0
      ? Effect.succeed<ReadonlyArray<string>>([])
      : Effect.map(
          Effect.orDie(sql<{ account_id: string }>`
            SELECT DISTINCT data->>'accountId' AS account_id FROM ${sql(queueSchema)}.job
            WHERE name = 'account-work' AND data->>'accountId' IN ${sql.in(accounts)} AND state IN ('created', 'retry', 'active') ORDER BY 1`),
          (rows): ReadonlyArray<string> => rows.map((r) => r.account_id)
        )
  )

/** The database's clock now (run start times are its). */
export const databaseNow = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(Effect.orDie(sql<{ at: Date }>`SELECT now() AS at`), (rows) => new Date(rows[0]!.at))
)

/**
 * Why accounts did not run again, from the queue and the leases: each account's jobs of the account queue (state,
 * attempts, priority, due in, heartbeat age, last error), its lease (holder, expiring in) and whether it ran since `since`.
 */
export const whyNotRunAgain = (queueSchema: string, accounts: ReadonlyArray<string>, since: Date) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const jobs = yield* Effect.orDie(sql<{ account_id: string; state: string; retry_count: number; priority: number; due_in: number; beat_ago: number | null; error: string | null }>`
      SELECT data->>'accountId' AS account_id, state, retry_count, priority,
        round(extract(epoch FROM start_after - now()))::int AS due_in, round(extract(epoch FROM now() - heartbeat_on))::int AS beat_ago,
        output->'value'->>'message' AS error
      FROM ${sql(queueSchema)}.job WHERE name = 'account-work' AND data->>'accountId' IN ${sql.in(accounts)} ORDER BY created_on`)
    const leases = yield* Effect.orDie(sql<{ account_id: string; holder: string; expires_in: number | null }>`
      SELECT account_id, holder, CASE WHEN isfinite(expires_at) THEN round(extract(epoch FROM expires_at - now()))::int END AS expires_in FROM account_leases WHERE account_id IN ${sql.in(accounts)}`)
    const ran = yield* Effect.orDie(sql<{ account_id: string }>`
      SELECT DISTINCT account_id FROM sync_runs WHERE started_at > ${since}::timestamptz AND outcome <> 'skipped' AND account_id IN ${sql.in(accounts)}`)
    return accounts
      .map((a) => {
        const lease = leases.find((l) => l.account_id === a)
        const its = jobs.filter((j) => j.account_id === a).map((j) => `${j.state} (attempt ${j.retry_count}, priority ${j.priority}, due in ${j.due_in} s${j.beat_ago === null ? "" : `, heartbeat ${j.beat_ago} s ago`}${j.error ? `, ${j.error}` : ""})`)
        return `${a}: ${ran.some((r) => r.account_id === a) ? "ran again" : "not run again"}; lease ${lease ? `${lease.holder}, ${lease.expires_in === null ? "released" : `expiring in ${lease.expires_in} s`}` : "none"}; jobs ${its.join(", ") || "none"}`
      })
      .join("; ")
  })
