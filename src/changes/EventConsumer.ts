import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Context, Duration, Effect, FiberMap, Layer, Metric, Option, Random } from "effect"
import type { AccountCredentials } from "../api/ServiceClient.js"
import { AccessTokens } from "../auth/AccessTokens.js"
import { Connections } from "../auth/Connections.js"
import { EventQueue } from "./EventQueue.js"
import type { QueuedEvent } from "./queuedEvents.js"
import * as Metrics from "../observability/metrics.js"
import { AccountLeases, heldLease, stillHeld } from "../sync/AccountLeases.js"
import { Checkpoints } from "../sync/pass/Checkpoints.js"
import { Dependents, pointsOf } from "../sync/pass/Dependents.js"
import type { Page, ReceivedNode } from "../sync/model.js"
import { Pager } from "../sync/paging/Pager.js"
import { type ChangedItem, pointsOfRead } from "../sync/pass/Refetch.js"
import { refetchReader } from "../sync/pass/refetchReader.js"
import { describeError, isRevocation } from "../sync/RunOutcome.js"
import type { AnyStream } from "../sync/streams/Stream.js"
import { SyncSettings } from "../sync/SyncSettings.js"
import { Warehouse } from "../sync/landing/Warehouse.js"
import { EventSettings, retryDelay } from "./EventSettings.js"
import { restartsInARow } from "./restarts.js"
import { changeOf } from "./topics.js"

/** What draining one account did. */
export interface DrainReport {
  readonly accountId: string
  /**
   * locked: another process writes the account now (its events wait); needs-reconnect: its tokens were refused;
   * api-version-replaced: the service answered from another API version than the pinned one (its events wait).
   */
  readonly outcome: "drained" | "locked" | "needs-reconnect" | "api-version-replaced"
  readonly applied: number
  readonly failed: number
  /** Left to the stream's next full pass, or (needs-reconnect) waiting until the account is connected again. */
  readonly deferred: number
  /** Records landed (read again), and marked deleted: those the events named and the rows holding their data. */
  readonly landed: number
  readonly deleted: number
  readonly costPoints: number
}

/**
 * Applies the change events the webhook inbox queued: per account (under its lease, like `sync`), item ids grouped by
 * stream, read again the stream's way (by id where the collection filters by id) in batches the budget sizes, and
 * landed like any page (children included); a destroy, or an item a read by id no longer finds, is marked deleted at
 * once. The rows of other streams that hold the changed records' data (`dependsOn`: a visit's line items are its
 * job's) are read again and landed in the same transaction (Dependents.ts). A pass and the consumer may land the same
 * rows in any order: the landing keeps the newest (see steps.ts). The events of an account that is not connected
 * (revoked, disconnected) wait, no attempt counted, until it is connected again; then they are applied (or, past the
 * retention, pruned).
 */
export class EventConsumer extends Context.Tag("account-sync/EventConsumer")<
  EventConsumer,
  {
    /** Every due event of the account, until none is left. */
    readonly drain: (accountId: string) => Effect.Effect<DrainReport, SqlError.SqlError>
    /**
     * Every due event of the account, applied by the run whose fiber holds its lease (between two pages of a pass):
     * no lease taken, every write fenced by the holder's epoch. Its first statement says whether any is due; a fiber
     * that holds no lease of the account applies nothing (`locked`).
     */
    readonly drainHeld: (accountId: string) => Effect.Effect<DrainReport, SqlError.SqlError>
    /** Every account with due events, `EVENTS_CONCURRENCY` at a time (`sync --events-only`). */
    readonly drainAll: () => Effect.Effect<ReadonlyArray<DrainReport>, SqlError.SqlError>
    /** Forever: due accounts drained as they come, each in its own fiber, at most EVENTS_CONCURRENCY at once (`serve`). */
    readonly run: Effect.Effect<never, SqlError.SqlError>
  }
>() {}

/** Events taken per round of an account. */
const roundSize = 500

interface StreamResult {
  readonly landed: number
  readonly deleted: number
  readonly deferred: number
  readonly costPoints: number
}

export const EventConsumerLive = Layer.effect(
  EventConsumer,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const queue = yield* EventQueue
    const warehouse = yield* Warehouse
    const dependents = yield* Dependents
    const checkpoints = yield* Checkpoints
    const tokens = yield* AccessTokens
    const connections = yield* Connections
    const leases = yield* AccountLeases
    const settings = yield* EventSettings
    const streams = (yield* SyncSettings).streams.catalog

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const readerFor = refetchReader(yield* Pager, warehouse)

    /** One stream's events of one account: destroys marked, the rest read again and landed, all settled together. */
    const applyStream = <E>(credentials: AccountCredentials<E>, stream: AnyStream, events: ReadonlyArray<QueuedEvent>) =>
      Effect.gen(function* () {
        const { accountId } = credentials
        // an item's latest event says what it is (a destroy wins a tie: it is final)
        const latest = new Map<string, { readonly destroyed: boolean; readonly occurredAt: Date }>()
        for (const e of events) {
          const destroyed = changeOf(e.topic, [stream])!.destroyed
          const seen = latest.get(e.itemId)
          const t = e.occurredAt.getTime()
          if (seen === undefined || t > seen.occurredAt.getTime() || (t === seen.occurredAt.getTime() && destroyed)) latest.set(e.itemId, { destroyed, occurredAt: e.occurredAt })
        }
        const destroyedIds = [...latest].filter(([, v]) => v.destroyed).map(([id]) => id)
        const changed: Array<ChangedItem> = [...latest].filter(([, v]) => !v.destroyed).map(([id, v]) => ({ id, occurredAt: v.occurredAt }))
        const read =
          changed.length === 0
            ? { pages: [] as ReadonlyArray<Page>, gone: [] as ReadonlyArray<string>, unreachable: [] as ReadonlyArray<string>, countPoints: 0 }
            : stream.refetch === undefined
              ? { pages: [], gone: [], unreachable: changed.map((c) => c.id), countPoints: 0 }
              : yield* stream.refetch.read(changed, readerFor(credentials, stream))
        // the rows of other streams that hold these records' data (a visit's line items are its job's), read again too
        const earliest = new Date(Math.min(...events.map((e) => e.occurredAt.getTime())))
        const dependentReads = yield* dependents.read(credentials, stream, [...latest.keys()], earliest)
        const nodes: Array<ReceivedNode> = read.pages.flatMap((p) => p.nodes)
        const fetchedAt = new Date(Math.min(...read.pages.map((p) => p.fetchedAtMs), Number.MAX_SAFE_INTEGER))
        const at = yield* now
        const unreachable = new Set(read.unreachable)
        const deferredEvents = events.filter((e) => unreachable.has(e.itemId)).map((e) => e.id)
        const appliedEvents = events.filter((e) => !unreachable.has(e.itemId)).map((e) => e.id)
        const { deleted, dependentsLanded } = yield* sql.withTransaction(
          Effect.gen(function* () {
            // the lease checked first: once it moved to another holder, none of this is written
            yield* stillHeld(sql, accountId, stream.name)
            let deleted = 0
            if (destroyedIds.length > 0) deleted += (yield* warehouse.markDeleted(accountId, stream, destroyedIds, at)).length
            if (nodes.length > 0) yield* warehouse.land({ accountId, stream, pages: read.pages, pass: undefined, recordSeen: true, fetchedAt })
            if (read.gone.length > 0) deleted += (yield* warehouse.markDeleted(accountId, stream, read.gone, at)).length
            const following = yield* dependents.land(accountId, dependentReads, at)
            deleted += following.deleted
            if (deferredEvents.length > 0) {
              yield* checkpoints.requestFullPass(accountId, stream.name)
              yield* queue.applied(deferredEvents, at, "deferred")
            }
            if (appliedEvents.length > 0) yield* queue.applied(appliedEvents, at)
            // all the events announced is landed: the stream is known current as of the re-read (or now, for destroys)
            if (appliedEvents.length > 0 && deferredEvents.length === 0) yield* checkpoints.markCurrent(accountId, stream.name, nodes.length > 0 ? fetchedAt : at)
            return { deleted, dependentsLanded: following.landed }
          })
        )
        yield* Metric.incrementBy(Metrics.forAccount(Metrics.eventsApplied, accountId), appliedEvents.length)
        for (const e of events) yield* Metric.update(Metrics.eventLagSeconds, Math.max(0, (at.getTime() - e.occurredAt.getTime()) / 1000))
        // the points metric is counted per query where every query is (CostBudget.observe), not here again
        const costPoints = pointsOfRead(read) + pointsOf(dependentReads)
        return { landed: new Set(nodes.map((n) => n.node.id)).size + dependentsLanded, deleted, deferred: deferredEvents.length, costPoints } satisfies StreamResult
      }).pipe(Effect.withSpan("events.stream", { attributes: { accountId: credentials.accountId, stream: stream.name, events: events.length } }))

    const failEvents = (accountId: string, events: ReadonlyArray<QueuedEvent>, error: string) =>
      Effect.gen(function* () {
        const at = (yield* now).getTime()
        const jitter = yield* Random.next
        const giveUp = events.filter((e) => e.attempts + 1 >= settings.maxAttempts)
        const retry = events.filter((e) => e.attempts + 1 < settings.maxAttempts)
        if (giveUp.length > 0) yield* queue.failed(giveUp.map((e) => e.id), error, null)
        // one backoff for the group: its events were tried together
        const attempts = Math.max(0, ...retry.map((e) => e.attempts))
        if (retry.length > 0) yield* queue.failed(retry.map((e) => e.id), error, new Date(at + Duration.toMillis(retryDelay(settings.retryBase, attempts, jitter))))
        yield* Metric.incrementBy(Metrics.forAccount(Metrics.eventsFailed, accountId), events.length)
        yield* Effect.logWarning(`${events.length} change event(s) failed${giveUp.length > 0 ? ` (${giveUp.length} given up on)` : ""}: ${error}`)
      })

    /** A write of the queue alone (ignoring, failing events) under the fiber's lease of the account: nothing once it moved. */
    const fenced = <A, E, R>(accountId: string, write: Effect.Effect<A, E, R>) => sql.withTransaction(Effect.zipRight(stillHeld(sql, accountId, "events"), write))

    const emptyReport = (accountId: string): DrainReport => ({ accountId, outcome: "drained", applied: 0, failed: 0, deferred: 0, landed: 0, deleted: 0, costPoints: 0 })

    /** The account's due events, round after round, under the lease this fiber holds. */
    const applyDue = (accountId: string) =>
      Effect.gen(function* () {
        const report: { -readonly [K in keyof DrainReport]: DrainReport[K] } = emptyReport(accountId)
        const credentials = tokens.credentials(accountId)
        for (;;) {
          const events = yield* queue.due(accountId, yield* now, roundSize)
          if (events.length === 0) break
          const byStream = new Map<AnyStream, Array<QueuedEvent>>()
          const ignored: Array<string> = []
          for (const e of events) {
            const change = changeOf(e.topic, streams)
            if (change === undefined) ignored.push(e.id)
            else byStream.set(change.stream, [...(byStream.get(change.stream) ?? []), e])
          }
          if (ignored.length > 0) yield* fenced(accountId, Effect.flatMap(now, (at) => queue.applied(ignored, at, "ignored")))
          for (const [stream, group] of byStream) {
            const result = yield* Effect.either(applyStream(credentials, stream, group))
            if (result._tag === "Right") {
              report.applied += group.length - result.right.deferred
              report.deferred += result.right.deferred
              report.landed += result.right.landed
              report.deleted += result.right.deleted
              report.costPoints += result.right.costPoints
              continue
            }
            const error = result.left
            // not the events' fault: they stay due, no attempt spent, until the pin is moved (or the replacement allowed)
            if (error._tag === "ApiVersionReplaced") return { ...report, outcome: "api-version-replaced" as const }
            // the account's lease moved to another holder: it writes the account now (its events wait, no attempt spent)
            if (error._tag === "AccountLockLost") return { ...report, outcome: "locked" as const }
            // nothing more can be read for the account: its events wait for it to be reconnected
            if (isRevocation(error) && (yield* connections.status(accountId)) !== "active") {
              const waiting = yield* fenced(accountId, queue.waitForReconnect(accountId, `${stream.name}: ${describeError(error)}`))
              yield* Effect.logWarning(`${waiting} change event(s) wait until the account is connected again: ${describeError(error)}`)
              return { ...report, deferred: report.deferred + waiting, outcome: "needs-reconnect" as const }
            }
            yield* fenced(accountId, failEvents(accountId, group, `${stream.name}: ${describeError(error)}`))
            report.failed += group.length
          }
        }
        return report
      }).pipe(
        // the lease moved to another holder while the queue alone was written: nothing was, the events wait for it
        Effect.catchTag("AccountLockLost", () => Effect.succeed({ ...emptyReport(accountId), outcome: "locked" as const }))
      )

    const drain = (accountId: string) =>
      Effect.gen(function* () {
        // nothing pending at all: no lease taken (the accounts' leases share one session; an idle account's events job
        // must not queue behind every other account's lease round trips)
        if ((yield* queue.nextAttemptAt(accountId)) === null) return emptyReport(accountId)
        if (Option.isSome(yield* leases.acquire(accountId))) return { ...emptyReport(accountId), outcome: "locked" as const }
        return yield* applyDue(accountId)
      }).pipe(
        Effect.scoped,
        Effect.annotateLogs({ accountId }),
        Effect.withSpan("events.drain", { attributes: { accountId } })
      )

    const drainHeld = (accountId: string) =>
      Effect.gen(function* () {
        if ((yield* heldLease(accountId)) === undefined) return { ...emptyReport(accountId), outcome: "locked" as const }
        return yield* applyDue(accountId)
      }).pipe(Effect.annotateLogs({ accountId }), Effect.withSpan("events.drainHeld", { attributes: { accountId } }))

    /** The events of accounts connected again since they had to wait: due now. */
    const resumeReconnected = Effect.gen(function* () {
      for (const accountId of yield* queue.accountsWaitingForReconnect()) {
        if ((yield* connections.status(accountId)) !== "active") continue
        yield* queue.resume(accountId, yield* now)
        yield* Effect.logInfo("the account is connected again: its waiting change events are due").pipe(Effect.annotateLogs({ accountId }))
      }
    })

    const drainAll = () =>
      resumeReconnected.pipe(
        Effect.zipRight(Effect.flatMap(now, queue.accountsDue)),
        Effect.flatMap((accounts) => Effect.forEach(accounts, drain, { concurrency: settings.concurrency }))
      )

    // an account whose queue emptied is set to 0, not left at its last depth
    const published = new Set<string>()
    const publishDepth = Effect.flatMap(queue.depth(), (depths) =>
      Effect.gen(function* () {
        const now = new Map(depths.map((d) => [d.accountId, d.waiting]))
        for (const accountId of new Set([...published, ...now.keys()])) {
          yield* Metric.set(Metrics.forAccount(Metrics.eventQueueDepth, accountId), now.get(accountId) ?? 0)
          published.add(accountId)
        }
      })
    )

    const run = Effect.gen(function* () {
      const running = yield* FiberMap.make<string>()
      const permits = yield* Effect.makeSemaphore(settings.concurrency)
      for (;;) {
        yield* resumeReconnected
        const due = yield* Effect.flatMap(now, queue.accountsDue)
        for (const accountId of due) {
          yield* FiberMap.run(
            running,
            accountId,
            permits.withPermits(1)(drain(accountId)).pipe(
              Effect.catchAllCause((cause) => Effect.logError("applying change events failed; retried on the next round", cause))
            ),
            { onlyIfMissing: true }
          )
        }
        yield* publishDepth
        yield* Effect.sleep(settings.pollInterval)
      }
    }).pipe(
      Effect.scoped,
      // the queue itself unreadable (the database away): the loop starts again after a jittered backoff
      Effect.tapError((e) => Effect.logWarning("reading the change-event queue failed; trying again", e)),
      Effect.retry(restartsInARow(20))
    ) as Effect.Effect<never, SqlError.SqlError>

    return EventConsumer.of({ drain, drainHeld, drainAll, run })
  })
)
