import type { SqlError } from "@effect/sql"
import { Cause, Context, Effect, Either, Layer, Schema } from "effect"
import { AccountData, AccountQuery } from "../api/documents.js"
import { ApiVersionReplaced } from "../api/errors.js"
import { ServiceClient } from "../api/ServiceClient.js"
import { AccessTokens } from "../auth/AccessTokens.js"
import { type Connection, Connections } from "../auth/Connections.js"
import { isLostConnectionError } from "../db/connectionRetry.js"
import { DatabaseTopology } from "../db/Database.js"
import type { ReadAlongside } from "../db/readAlongside.js"
import { AccountHealth, recordOutcomeStatement } from "./AccountHealth.js"
import { AccountLeases, type HeldElsewhere, type TakenForRun } from "../sync/AccountLeases.js"
import type { Mode } from "../sync/pass/PassPlan.js"
import { planAccount } from "./accountPlan.js"
import { Pager } from "../sync/paging/Pager.js"
import { pagingStopRequested } from "../sync/paging/pagingStop.js"
import { Progress } from "./Progress.js"
import { describeError, isRevocation, type Revocation } from "../sync/RunOutcome.js"
import { Runs } from "./Runs.js"
import type { AnyStream } from "../sync/streams/Stream.js"
import { StreamRun } from "./StreamRun.js"
import type { StreamReport } from "./streamRunResult.js"
import { selectStreams, SyncSettings } from "../sync/SyncSettings.js"
import { runSpan } from "../observability/spans.js"

export interface RunRequest {
  readonly mode: Mode
  /** Only these accounts (default: every active connection). */
  readonly accounts?: ReadonlyArray<string>
  /** Only these streams (default: SYNC_STREAMS, else all). */
  readonly streams?: ReadonlyArray<string>
  readonly concurrency?: number
  /** backfill: forget the checkpoint and start the full pass over. */
  readonly restart?: boolean
}

/** synced: every stream done; needs-reconnect: the connection is revoked or disconnected; skipped: its lease held by another run. */
export type AccountOutcome = "synced" | "needs-reconnect" | "failed" | "skipped"

export interface AccountReport {
  readonly accountId: string
  readonly accountName: string
  readonly outcome: AccountOutcome
  readonly streams: ReadonlyArray<StreamReport>
  readonly message?: string
  /** The database stopped answering (what failed): the account's run stopped at the stream it was on. */
  readonly databaseLost?: string
  /** The account failed because the service answered from another API version than the pinned one. */
  readonly apiVersionReplaced?: { readonly pinned: string; readonly answered: string }
  /** skipped: who holds the account's lease. */
  readonly heldElsewhere?: HeldElsewhere
  /** failed: the account's lease moved to another holder mid-run (that holder's run says how the account fares). */
  readonly leaseLost?: boolean
}

export interface SyncRunnerShape {
  readonly run: (request: RunRequest) => Effect.Effect<ReadonlyArray<AccountReport>, SqlError.SqlError>
}

/** The accounts of a run: which ones, one lease each, their streams one after another, at the chosen concurrency. */
export class SyncRunner extends Context.Tag("account-sync/SyncRunner")<SyncRunner, SyncRunnerShape>() {}

/**
 * The active connections to run (per `--account`), and a report for every revoked one: a revoked account is never
 * selected, so without this a cron run would exit 0 while it silently stops syncing. Disconnected ones (the admin
 * uninstalled the app on purpose) are reported only when asked for by `--account`.
 */
export const selectAccounts = (all: ReadonlyArray<Connection>, accounts: ReadonlyArray<string> | undefined) => {
  const filter = accounts && accounts.length > 0 ? accounts : undefined
  const wanted = (accountId: string) => filter === undefined || filter.includes(accountId)
  const run = all.filter((c) => c.status === "active" && wanted(c.accountId))
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
}

/** The pinned and the answering API version, when `error` is the service replacing our version. */
const replacedBy = (error: unknown): Pick<AccountReport, "apiVersionReplaced"> =>
  error instanceof ApiVersionReplaced ? { apiVersionReplaced: { pinned: error.pinned, answered: error.answered } } : {}

/** The pass a run of `request` records for a stream it never began. */
const kindOf = (request: RunRequest) => (request.mode === "backfill" ? "full" : "incremental")

export const SyncRunnerLive = Layer.effect(
  SyncRunner,
  Effect.gen(function* () {
    const connections = yield* Connections
    const tokens = yield* AccessTokens
    const client = yield* ServiceClient
    const leases = yield* AccountLeases
    const streamRun = yield* StreamRun
    const runs = yield* Runs
    const progress = yield* Progress
    const pager = yield* Pager
    const settings = yield* SyncSettings
    const singleSession = (yield* DatabaseTopology).singleSession
    const health = yield* AccountHealth

    /**
     * A run that synced or failed counts in the account's health (skipped and revoked ones say nothing about it, nor
     * does a run whose lease moved: it writes nothing more for the account).
     */
    const countsInHealth = (report: AccountReport): report is AccountReport & { readonly outcome: "synced" | "failed" } =>
      (report.outcome === "synced" || report.outcome === "failed") && report.leaseLost !== true
    // reports whose outcome the lease's release statement recorded
    const recordedOnRelease = new WeakSet<AccountReport>()
    const recordHealth = (report: AccountReport) =>
      countsInHealth(report) && !recordedOnRelease.has(report)
        ? health
            .record(report.accountId, report.outcome, report.message ?? null)
            .pipe(Effect.catchAll((e) => Effect.logWarning(`could not record the account's run outcome (alerts read it): ${describeError(e)}`)))
        : Effect.void

    const runAccount = (account: Connection, streams: ReadonlyArray<AnyStream>, request: RunRequest): Effect.Effect<AccountReport, SqlError.SqlError> => {
      let onRelease: TakenForRun["onRelease"] | undefined
      return Effect.gen(function* () {
        const { accountId } = account
        let accountName = account.accountName
        const taken = yield* leases.acquireForRun(accountId)
        if (Either.isLeft(taken)) {
          const { holder, thisProcess } = taken.left
          const message = `${thisProcess ? "another run of this process" : "another account-sync process"} is syncing this account (held by ${holder})`
          yield* Effect.logWarning(message)
          for (const s of streams) yield* runs.skipped(accountId, s.name, kindOf(request), message)
          return { accountId, accountName, outcome: "skipped", streams: [], message, heldElsewhere: taken.left } satisfies AccountReport
        }
        onRelease = taken.right.onRelease
        const abandoned = taken.right.abandoned ?? (yield* runs.closeAbandoned(accountId))
        if (abandoned > 0) yield* Effect.logInfo(`${abandoned} run(s) left 'running' under an earlier holder of the account's lease marked interrupted`)

        const reports: Array<StreamReport> = []
        const revoked = (error: Revocation) =>
          Effect.gen(function* () {
            // invalid_grant is marked by AccessTokens; a token refused right after a refresh is marked here
            if (error._tag === "GraphqlTokenInvalid") {
              yield* connections.markRevoked(accountId, "the service rejected a freshly refreshed access token (401)")
            }
            yield* Effect.logWarning(`the account needs reconnecting: ${error.message}`)
            return { accountId, accountName, outcome: "needs-reconnect", streams: reports, message: error.message } satisfies AccountReport
          })

        const credentials = tokens.credentials(accountId)
        // read for every stream at once; when that fails each stream reads its own, and records its own failure. Before
        // the account query: the token it needs comes in the same statement, and its kept copy lasts the run
        const readInputs = (alongside?: ReadAlongside) => Effect.map(Effect.either(streamRun.decisionInputs(accountId, streams, alongside)), Either.getOrUndefined)
        let inputs = yield* readInputs(yield* tokens.readAlongside(accountId))
        const named = yield* client.execute(credentials, AccountQuery).pipe(
          Effect.flatMap((r) => Schema.decodeUnknown(AccountData)(r.data)),
          Effect.either
        )
        if (named._tag === "Left") {
          const error = named.left
          if (isRevocation(error)) return yield* revoked(error)
          const message = error._tag === "ParseError" ? error.message : describeError(error)
          // the account's streams did not run: each is recorded failed, so its sync_runs and `status` say why
          yield* Effect.logError(`account query failed: ${message}`)
          for (const s of streams) yield* runs.failedBeforeStart(accountId, s.name, kindOf(request), `account query: ${message}`)
          return {
            accountId,
            accountName,
            outcome: "failed",
            streams: reports,
            message: `account query: ${message}`,
            ...replacedBy(error)
          } satisfies AccountReport
        }
        if (named.right.account && named.right.account.name !== accountName) {
          accountName = named.right.account.name
          yield* connections.rename(accountId, accountName)
        }

        if (request.mode === "backfill") yield* planAccount(pager, progress, credentials, streams)
        // a failing stream does not stop the others: each stream is its own collection; only a revoked connection
        // (nothing more can be read) or an interruption ends the account's run early
        const failed: Array<string> = []
        for (const [i, stream] of streams.entries()) {
          // asked to stop asking for pages (a worker's slice ended) after a stream that ended: the next is the follow-up job's
          if (yield* pagingStopRequested) return yield* Effect.interrupt
          const known = inputs?.get(stream.name)
          const { report, classified, askedFullPass } = yield* streamRun.run({
            ...(known ? { inputs: known } : {}),
            credentials,
            accountName,
            streamNumber: i + 1,
            streams: streams.length,
            stream,
            mode: request.mode,
            restart: request.restart === true
          })
          reports.push(report)
          // a pass that read other streams' rows again may have asked for a full pass of one of them (Dependents)
          if (askedFullPass === true) inputs = yield* readInputs()
          if (classified.failure?._tag === "AccountLockLost") {
            // the account may be another process's now: none of its streams is written any more by this run
            yield* Effect.logError(classified.failure.message)
            return { accountId, accountName, outcome: "failed", streams: reports, message: classified.failure.message, leaseLost: true } satisfies AccountReport
          }
          if (classified.outcome === "interrupted") return yield* Effect.interrupt
          if (classified.failure !== undefined && isRevocation(classified.failure)) return yield* revoked(classified.failure)
          if (classified.outcome === "failed") {
            yield* Effect.logError(`stream ${stream.name} failed: ${report.error}`)
            failed.push(`${stream.name}: ${report.error}`)
            // the database stopped answering: every later stream would fail the same way, so the account stops here
            if (isLostConnectionError(classified.failure)) {
              return { accountId, accountName, outcome: "failed", streams: reports, message: failed.join("; "), databaseLost: report.error ?? "" } satisfies AccountReport
            }
            // every later query would be answered by the same other version: the account stops here
            const replaced = replacedBy(classified.failure)
            if (replaced.apiVersionReplaced) return { accountId, accountName, outcome: "failed", streams: reports, message: failed.join("; "), ...replaced } satisfies AccountReport
          }
        }
        if (failed.length > 0) return { accountId, accountName, outcome: "failed", streams: reports, message: failed.join("; ") } satisfies AccountReport
        return { accountId, accountName, outcome: "synced", streams: reports } satisfies AccountReport
      }).pipe(
        // the outcome recorded by the lease's release, in its statement
        Effect.tap((report) =>
          onRelease !== undefined && countsInHealth(report)
            ? Effect.zipRight(
                onRelease({ statement: recordOutcomeStatement, params: [report.outcome, report.message ?? null] }),
                Effect.sync(() => recordedOnRelease.add(report))
              )
            : Effect.void
        ),
        Effect.scoped,
        Effect.ensuring(progress.accountEnded(account.accountId)),
        // a bug met by one account fails that account, not the run: the others finish and are recorded
        Effect.catchAllDefect((defect) =>
          Effect.gen(function* () {
            const message = `unexpected failure: ${Cause.pretty(Cause.die(defect)).split("\n")[0] ?? "unknown"}`
            yield* Effect.logError(message, Cause.die(defect))
            return { accountId: account.accountId, accountName: account.accountName, outcome: "failed", streams: [], message } satisfies AccountReport
          })
        ),
        Effect.annotateLogs({ accountId: account.accountId }),
        runSpan("sync.account", { accountId: account.accountId })
      )
    }

    const run: SyncRunnerShape["run"] = (request) =>
      Effect.gen(function* () {
        const streams = selectStreams(settings, request.streams)
        // the accounts asked for are read alone (in one statement): a worker's job names one account, and listing every
        // connection (with its last run) for each job made the database, shared by every worker, what bound them
        const known = request.accounts && request.accounts.length > 0 ? yield* connections.getMany(request.accounts) : yield* connections.list()
        const { run: accounts, notActive } = selectAccounts(known, request.accounts)
        // one account at a time on a single-session database: its statements must never overlap
        const concurrency = singleSession ? 1 : (request.concurrency ?? settings.concurrency)
        yield* progress.runPlanned({ accounts: accounts.length, concurrency })
        const reports = yield* Effect.forEach(accounts, (a) => Effect.tap(runAccount(a, streams, request), recordHealth), { concurrency })
        return [...reports, ...notActive].sort((a, b) => a.accountId.localeCompare(b.accountId))
      }).pipe(Effect.withSpan("sync.run", { attributes: { mode: request.mode } }))

    return SyncRunner.of({ run })
  })
)
