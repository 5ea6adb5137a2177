import { SqlClient, type SqlConnection, type SqlError } from "@effect/sql"
import { Cause, Clock, Context, Duration, Effect, Exit, Layer, Metric, Option, Ref, Schema, Scope, Stream, SynchronizedRef } from "effect"
import { CostBudget } from "../api/CostBudget.js"
import * as Metrics from "../observability/metrics.js"
import { AccountQuery } from "../api/documents.js"
import { ServiceClient } from "../api/ServiceClient.js"
import { Connections } from "../auth/Connections.js"
import { isConnectionLost, retryOnConnectionLoss } from "../db/connectionRetry.js"
import { type Page, pageBatches, pages } from "./Pager.js"
import { Progress } from "./Progress.js"
import { type RunCounts, type RunOutcome, Runs, zeroCounts } from "./Runs.js"
import { allStreams } from "./streams/index.js"
import type { AnyStream } from "./streams/StreamDefinition.js"
import { SyncSettings } from "./SyncSettings.js"
import { type Checkpoint, type PassKind, Warehouse } from "./Warehouse.js"

export type Mode = "sync" | "backfill"

export interface RunRequest {
  readonly mode: Mode
  /** Only these accounts (default: every active connection). */
  readonly accounts?: ReadonlyArray<string>
  /** Only these streams (default: all). */
  readonly streams?: ReadonlyArray<string>
  readonly concurrency?: number
  /** backfill: forget the checkpoint and start the full pass over. */
  readonly restart?: boolean
}

export interface StreamReport {
  readonly stream: string
  readonly kind: PassKind
  readonly outcome: RunOutcome
  readonly resumed: boolean
  readonly counts: RunCounts
  readonly error?: string
}

/** synced: every stream done; needs-reconnect: the connection is revoked or disconnected; skipped: locked elsewhere. */
export type AccountOutcome = "synced" | "needs-reconnect" | "failed" | "skipped" | "interrupted"

export interface AccountReport {
  readonly accountId: string
  readonly accountName: string
  readonly outcome: AccountOutcome
  readonly streams: ReadonlyArray<StreamReport>
  readonly message?: string
}

const AccountData = Schema.Struct({ account: Schema.NullOr(Schema.Struct({ id: Schema.String, name: Schema.String })) })

/** Errors that mean the account's connection is gone, not that the run failed. */
const revocationTags = new Set(["TokenRefused", "NotConnected", "GraphqlTokenInvalid"])
const isRevocation = (e: unknown): boolean =>
  typeof e === "object" && e !== null && revocationTags.has((e as { _tag?: string })._tag ?? "")
type Tagged = { readonly _tag: string; readonly message: string }

const errorMessage = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const e = failure.value
    return e instanceof Error || (typeof e === "object" && e !== null && "message" in e) ? String((e as Error).message) : String(e)
  }
  return Cause.pretty(cause).split("\n")[0] ?? "defect"
}

/**
 * The two-int advisory lock key of an account ($1). Advisory locks are database-wide: the schema is part of the key,
 * so deployments (or test files) sharing a database under different DB_SCHEMAs never skip each other's accounts.
 */
export const accountLockKey = "hashtext('account-sync:' || current_schema()), hashtext($1)"

export interface SyncRunnerShape {
  readonly run: (request: RunRequest) => Effect.Effect<ReadonlyArray<AccountReport>, SqlError.SqlError>
}

export class SyncRunner extends Context.Tag("account-sync/SyncRunner")<SyncRunner, SyncRunnerShape>() {}

export const makeSyncRunner = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const connections = yield* Connections
  const client = yield* ServiceClient
  const budget = yield* CostBudget
  const warehouse = yield* Warehouse
  const runs = yield* Runs
  const progress = yield* Progress
  const settings = yield* SyncSettings
  const context = yield* Effect.context<ServiceClient | CostBudget>()

  /**
   * One database session holds the advisory locks of every account a run syncs, instead of one reserved connection
   * per account: `--concurrency 50` needs one connection for the locks, not fifty idle ones beside the pool. When
   * that session is lost its locks go with it; the next lock request opens a new one. (The embedded Postgres,
   * PGlite, runs every connection in one session, so there the locks exclude nothing across processes.)
   */
  const makeLockSession = Effect.gen(function* () {
    const scope = yield* Effect.scope
    const current = yield* SynchronizedRef.make<Option.Option<SqlConnection.Connection>>(Option.none())
    // one statement at a time on the shared session (a pg client must not be given overlapping queries)
    const oneAtATime = yield* Effect.makeSemaphore(1)
    const session = SynchronizedRef.modifyEffect(current, (held) =>
      Option.isSome(held)
        ? Effect.succeed([held.value, held] as const)
        : Effect.map(Scope.extend(sql.reserve, scope), (connection) => [connection, Option.some(connection)] as const)
    )
    const execute = (statement: string, accountId: string) =>
      Effect.flatMap(session, (connection) => connection.execute(statement, [accountId], undefined)).pipe(
        oneAtATime.withPermits(1),
        Effect.tapError((e) => (isConnectionLost(e) ? SynchronizedRef.set(current, Option.none()) : Effect.void))
      )
    /** Holds `accountId` until the caller's scope closes; false when another process holds it. */
    const lockAccount = (accountId: string) =>
      Effect.gen(function* () {
        const rows = yield* execute(`SELECT pg_try_advisory_lock(${accountLockKey}) AS locked`, accountId)
        const locked = (rows[0] as { locked?: boolean } | undefined)?.locked === true
        if (locked) yield* Effect.addFinalizer(() => execute(`SELECT pg_advisory_unlock(${accountLockKey})`, accountId).pipe(Effect.ignore))
        return locked
      })
    return { lockAccount }
  })
  type LockSession = Effect.Effect.Success<typeof makeLockSession>

  const passKindFor = (mode: Mode, stream: AnyStream, checkpoint: Option.Option<Checkpoint>, now: number): PassKind => {
    if (mode === "backfill" || stream.incremental._tag === "None" || Option.isNone(checkpoint)) return "full"
    const c = checkpoint.value
    if (c.passKind === "full" || c.lastFullPassAt === null || c.highWaterMark === null) return "full"
    return now - c.lastFullPassAt.getTime() >= Duration.toMillis(settings.fullPassEvery) ? "full" : "incremental"
  }

  const runStream = (accountId: string, stream: AnyStream, mode: Mode, restart: boolean) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const kind = passKindFor(mode, stream, yield* warehouse.checkpoint(accountId, stream.name), now)
      const runId = yield* runs.start(accountId, stream.name, kind)
      const counts = yield* Ref.make<RunCounts>(zeroCounts)
      const resumed = yield* Ref.make(false)
      const before = yield* budget.stats(accountId)
      const withBudget = (c: RunCounts) =>
        Effect.map(budget.stats(accountId), (after) => ({
          ...c,
          costPoints: after.pointsUsed - before.pointsUsed,
          throttleWaitMs: after.waitedMs - before.waitedMs,
          throttled: after.throttled - before.throttled
        }))

      const body = Effect.gen(function* () {
        const begun = yield* warehouse.beginPass(accountId, stream, kind, { restart: restart && mode === "backfill" })
        yield* Ref.set(resumed, begun.resumed)
        if (begun.resumed) yield* Effect.logInfo(`resuming the full pass from its checkpoint`)
        const variables =
          kind === "incremental" && stream.incremental._tag === "NewestFirst" ? stream.incremental.variables : stream.fullPassVariables
        const stopBefore =
          kind === "incremental" && begun.checkpoint.highWaterMark
            ? begun.checkpoint.highWaterMark.getTime() - Duration.toMillis(settings.incrementalOverlap)
            : undefined
        let passHighWater: number | undefined
        let progressWrittenAt = now
        const source = pages({ accountId, stream, variables, after: begun.cursor })
        yield* pageBatches(source, { prefetch: !settings.singleSession }).pipe(
          Stream.mapEffect((batch) =>
            Effect.gen(function* () {
              // the batch's pages up to the one that ends the pass (the rest are not landed)
              const landing: Array<Page> = []
              let finishesPass = false
              let batchHighWater: number | undefined
              for (const page of batch) {
                const updated = page.nodes.map((n) => Date.parse(stream.updatedAt(n.node)))
                const pageHighWater = updated.length > 0 ? Math.max(...updated) : undefined
                if (pageHighWater !== undefined) {
                  passHighWater = Math.max(passHighWater ?? pageHighWater, pageHighWater)
                  batchHighWater = Math.max(batchHighWater ?? pageHighWater, pageHighWater)
                }
                landing.push(page)
                const reachedOldRows = stopBefore !== undefined && updated.every((t) => t < stopBefore)
                if (!page.hasNextPage || reachedOldRows) {
                  finishesPass = true
                  break
                }
              }
              const nodes = landing.length === 1 ? landing[0]!.nodes : landing.flatMap((page) => page.nodes)
              // an empty last page has no endCursor: the batch's cursor is the last one a page had
              const endCursor = landing.reduce<string | null>((cursor, page) => page.endCursor ?? cursor, null)
              const highWater = kind === "full" ? batchHighWater : passHighWater
              // a committed page is counted even when the run is being interrupted, so the run's row tells the truth
              const landedCounts = yield* warehouse
                .landPage({
                  accountId,
                  stream,
                  kind,
                  nodes,
                  bodies: landing.map((page) => page.body),
                  endCursor,
                  finishesPass,
                  highWaterMark: highWater === undefined ? null : new Date(highWater).toISOString()
                })
                .pipe(
                  Effect.tap((landed) =>
                    Effect.all([
                      Metric.incrementBy(Metrics.forAccount(Metrics.pagesCommitted, accountId), landing.length),
                      Metric.incrementBy(Metrics.forAccount(Metrics.rowsUpserted, accountId), landed.written)
                    ])
                  ),
                  Effect.withSpan("sync.page", { attributes: { accountId, stream: stream.name, pages: landing.length, rows: nodes.length } }),
                  Effect.flatMap((landed) =>
                    Ref.updateAndGet(counts, (c) => ({
                      ...c,
                      pages: c.pages + landing.length,
                      rows: c.rows + nodes.length,
                      rowsWritten: c.rowsWritten + landed.written,
                      rowsDeleted: c.rowsDeleted + landed.deleted
                    }))
                  ),
                  Effect.uninterruptible
                )
              const c = yield* withBudget(landedCounts)
              // the run's row follows the pages at most once a second (its end writes the final counts)
              const landedAt = yield* Clock.currentTimeMillis
              if (landedAt - progressWrittenAt >= 1000) {
                yield* runs.progress(runId, c)
                progressWrittenAt = landedAt
              }
              yield* progress.report({ accountId, stream: stream.name, kind, runId, counts: c, startedAtMs: now })
              return finishesPass
            })
          ),
          Stream.takeUntil((finished) => finished),
          Stream.runDrain
        )
      })

      const exit = yield* body.pipe(
        Effect.annotateLogs({ runId }),
        Effect.onExit((exit) =>
          Effect.gen(function* () {
            const c = yield* Effect.flatMap(Ref.get(counts), withBudget)
            const outcome: RunOutcome = Exit.isSuccess(exit)
              ? "succeeded"
              : Cause.isInterruptedOnly(exit.cause)
                ? "interrupted"
                : Option.exists(Cause.failureOption(exit.cause), isRevocation)
                  ? "revoked"
                  : "failed"
            const error = Exit.isFailure(exit) && outcome !== "interrupted" ? errorMessage(exit.cause) : undefined
            yield* runs.finish(runId, outcome, c, error).pipe(Effect.ignore)
            yield* Metric.increment(Metric.tagged(Metrics.forAccount(Metrics.runsFinished, accountId), "outcome", outcome))
            yield* progress.report({ accountId, stream: stream.name, kind, runId, counts: c, startedAtMs: now, done: outcome })
          })
        ),
        Effect.exit
      )
      const report: StreamReport = {
        stream: stream.name,
        kind,
        resumed: yield* Ref.get(resumed),
        counts: yield* Effect.flatMap(Ref.get(counts), withBudget),
        outcome: Exit.isSuccess(exit) ? "succeeded" : Option.exists(Cause.failureOption(exit.cause), isRevocation) ? "revoked" : "failed",
        ...(Exit.isFailure(exit) ? { error: errorMessage(exit.cause) } : {})
      }
      return { report, exit }
    }).pipe(Effect.annotateLogs({ stream: stream.name }), Effect.withSpan("sync.stream", { attributes: { accountId, stream: stream.name } }))

  const runAccount = (
    account: { readonly accountId: string; readonly accountName: string },
    streams: ReadonlyArray<AnyStream>,
    request: RunRequest,
    locks: LockSession
  ): Effect.Effect<AccountReport, SqlError.SqlError> =>
    Effect.gen(function* () {
      const { accountId } = account
      let accountName = account.accountName
      if (!(yield* retryOnConnectionLoss(locks.lockAccount(accountId)))) {
        const message = "another account-sync process is syncing this account; skipped"
        yield* Effect.logWarning(message)
        for (const s of streams) yield* runs.skipped(accountId, s.name, request.mode === "backfill" ? "full" : "incremental", message)
        return { accountId, accountName, outcome: "skipped", streams: [], message } satisfies AccountReport
      }
      const abandoned = yield* runs.closeAbandoned(accountId)
      if (abandoned > 0) yield* Effect.logInfo(`${abandoned} run(s) left 'running' by a stopped process marked interrupted`)

      const revoked = (error: Tagged) =>
        Effect.gen(function* () {
          // invalid_grant is marked by AccessTokens; a token refused right after a refresh is marked here
          if (error._tag === "GraphqlTokenInvalid") {
            yield* connections.markRevoked(accountId, "the service rejected a freshly refreshed access token (401)")
          }
          yield* Effect.logWarning(`the account needs reconnecting: ${error.message}`)
          return { accountId, accountName, outcome: "needs-reconnect", streams: reports, message: error.message } satisfies AccountReport
        })

      const reports: Array<StreamReport> = []
      const named = yield* client.execute(accountId, AccountQuery).pipe(
        Effect.flatMap((r) => Schema.decodeUnknown(AccountData)(r.data)),
        Effect.either
      )
      if (named._tag === "Left") {
        const error = named.left
        if (isRevocation(error)) return yield* revoked(error as Tagged)
        return { accountId, accountName, outcome: "failed", streams: reports, message: `account query: ${error.message}` } satisfies AccountReport
      }
      if (named.right.account && named.right.account.name !== accountName) {
        accountName = named.right.account.name
        yield* connections.rename(accountId, accountName)
      }

      for (const stream of streams) {
        const { report, exit } = yield* runStream(accountId, stream, request.mode, request.restart === true)
        reports.push(report)
        if (Exit.isFailure(exit)) {
          if (Cause.isInterruptedOnly(exit.cause)) return yield* Effect.interrupt
          const failure = Cause.failureOption(exit.cause)
          if (Option.isSome(failure) && isRevocation(failure.value)) return yield* revoked(failure.value as Tagged)
          yield* Effect.logError(`stream ${stream.name} failed: ${report.error}`)
          return { accountId, accountName, outcome: "failed", streams: reports, message: report.error } satisfies AccountReport
        }
      }
      return { accountId, accountName, outcome: "synced", streams: reports } satisfies AccountReport
    }).pipe(
      Effect.scoped,
      Effect.provide(context),
      Effect.annotateLogs({ accountId: account.accountId }),
      Effect.withSpan("sync.account", { attributes: { accountId: account.accountId } })
    )

  /**
   * The active connections to run (per `--account`), and a report for every revoked one: a revoked account is
   * never selected, so without this a cron run would exit 0 while it silently stops syncing. Disconnected ones (the
   * admin uninstalled the app on purpose) are reported only when asked for by `--account`.
   */
  const selectAccounts = (request: RunRequest) =>
    Effect.gen(function* () {
      const filter = request.accounts && request.accounts.length > 0 ? request.accounts : undefined
      const wanted = (accountId: string) => filter === undefined || filter.includes(accountId)
      const active = yield* connections.listActive()
      const all = yield* retryOnConnectionLoss(connections.list())
      const run = active.filter((a) => wanted(a.accountId))
      const notActive: Array<AccountReport> = all
        .filter((c) => c.status === "revoked" && wanted(c.accountId))
        .map((c) => ({
          accountId: c.accountId,
          accountName: c.accountName,
          outcome: "needs-reconnect" as const,
          streams: [],
          message: `connection revoked${c.statusReason ? ` (${c.statusReason})` : ""}; not synced until it is reconnected (account-sync connect)`
        }))
      for (const accountId of filter ?? []) {
        if (run.some((a) => a.accountId === accountId) || notActive.some((r) => r.accountId === accountId)) continue
        const connection = all.find((c) => c.accountId === accountId)
        notActive.push(
          connection === undefined
            ? { accountId, accountName: "", outcome: "failed" as const, streams: [], message: "no such connected account" }
            : {
                accountId,
                accountName: connection.accountName,
                outcome: "needs-reconnect" as const,
                streams: [],
                message: `connection is ${connection.status}${connection.statusReason ? ` (${connection.statusReason})` : ""}`
              }
        )
      }
      return { run, notActive }
    })

  const run: SyncRunnerShape["run"] = (request) =>
    Effect.gen(function* () {
      const streams = request.streams && request.streams.length > 0 ? allStreams.filter((s) => request.streams!.includes(s.name)) : allStreams
      const { run: accounts, notActive } = yield* selectAccounts(request)
      const locks = yield* makeLockSession
      const reports = yield* Effect.forEach(accounts, (a) => runAccount(a, streams, request, locks), {
        concurrency: settings.singleSession ? 1 : (request.concurrency ?? settings.concurrency)
      })
      return [...reports, ...notActive].sort((a, b) => a.accountId.localeCompare(b.accountId))
    }).pipe(Effect.scoped, Effect.withSpan("sync.run", { attributes: { mode: request.mode } }))

  return SyncRunner.of({ run })
})

export const SyncRunnerLive = Layer.effect(SyncRunner, makeSyncRunner)
