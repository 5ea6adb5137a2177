import { Clock, Context, Duration, Effect, type Exit, Layer, Metric, Ref, Stream } from "effect"
import { CostBudget } from "../api/CostBudget.js"
import type { AccountCredentials } from "../api/ServiceClient.js"
import type { AccessTokenError } from "../auth/errors.js"
import { DatabaseTopology } from "../db/Database.js"
import * as Metrics from "../observability/metrics.js"
import { Checkpoints } from "./Checkpoints.js"
import { Dependents } from "./Dependents.js"
import { EventQueue } from "../events/EventQueue.js"
import type { PageSummary } from "./Incremental.js"
import type { Page, PassKind } from "./model.js"
import { pageBatches, Pager } from "./Pager.js"
import { PassEnd } from "./PassEnd.js"
import { decidePass, type Mode, passKindOf } from "./PassPlan.js"
import { batchHighWater, newestOf } from "./PassState.js"
import { Progress } from "./Progress.js"
import { requestedPointsPerRow } from "./progressEstimate.js"
import { type Classified, classify, type RunOutcome, type StreamError } from "./RunOutcome.js"
import { type RunCounts, Runs, zeroCounts } from "./Runs.js"
import type { AnyStream } from "./streams/Stream.js"
import { fullPassCadence, SyncSettings } from "./SyncSettings.js"
import { Warehouse } from "./Warehouse.js"

/** One stream of one account in a run: what the summary and `sync_runs` say about it. */
export interface StreamReport {
  readonly stream: string
  /** The pass made, or "none" when a stream without incremental access was not due for its full pass. */
  readonly kind: PassKind | "none"
  readonly outcome: RunOutcome | "up-to-date"
  readonly resumed: boolean
  readonly counts: RunCounts
  /** How long the stream's run took (0 when it was up to date). */
  readonly durationMs: number
  readonly error?: string
  /** A stream that waits for its full pass: when it is due. */
  readonly nextFullPassAt?: Date
  /** A stream whose change events flow: when its next incremental pass is due. */
  readonly nextIncrementalAt?: Date
}

export interface StreamRunRequest {
  readonly credentials: AccountCredentials<AccessTokenError>
  /** The account's name and the stream's place among the run's streams (`streamNumber` of `streams`): progress shows them. */
  readonly accountName: string
  readonly streamNumber: number
  readonly streams: number
  readonly stream: AnyStream
  readonly mode: Mode
  /** backfill: forget the checkpoint and start the full pass over. */
  readonly restart: boolean
}

export interface StreamRunResult {
  readonly report: StreamReport
  readonly classified: Classified
}

/** One stream of one account: plan the pass, page, land each batch with its checkpoint, record the run. */
export class StreamRun extends Context.Tag("account-sync/StreamRun")<
  StreamRun,
  { readonly run: (request: StreamRunRequest) => Effect.Effect<StreamRunResult> }
>() {}

/** Ms between two writes of a run's counts to `sync_runs` while it goes (its end writes the final counts). */
const progressEveryMs = 1000

/** Ids of a batch's last page kept in the checkpoint: what a resumed pass joins its first page on. */
const anchorsKept = 20

export const StreamRunLive = Layer.effect(
  StreamRun,
  Effect.gen(function* () {
    const checkpoints = yield* Checkpoints
    const warehouse = yield* Warehouse
    const runs = yield* Runs
    const pager = yield* Pager
    const passEnd = yield* PassEnd
    const dependents = yield* Dependents
    const budget = yield* CostBudget
    const progress = yield* Progress
    const settings = yield* SyncSettings
    // on a single-session database statements must never overlap: no page is fetched while another lands
    const prefetch = !(yield* DatabaseTopology).singleSession

    const events = yield* EventQueue
    /** The stream's change events flow for the account: one that arrived within SYNC_INCREMENTAL_EVERY_WITH_EVENTS was applied. */
    const eventsFlow = (accountId: string, stream: AnyStream, now: number) =>
      stream.topic === undefined || Duration.toMillis(settings.incrementalEveryWithEvents) <= 0
        ? Effect.succeed(false)
        : Effect.map(Effect.orDie(events.lastApplied(accountId, stream.topic)), (at) => at !== null && now - at.getTime() < Duration.toMillis(settings.incrementalEveryWithEvents))

    const run = ({ credentials, accountName, streamNumber, streams, stream, mode, restart }: StreamRunRequest) =>
      Effect.gen(function* () {
        const { accountId } = credentials
        const now = yield* Clock.currentTimeMillis
        const withEvents = yield* eventsFlow(accountId, stream, now)
        const decision = decidePass({
          mode,
          incremental: stream.incremental,
          checkpoint: yield* Effect.orDie(checkpoints.read(accountId, stream.name)),
          nowMs: now,
          fullPassEvery: fullPassCadence(settings, stream),
          overlap: settings.incrementalOverlap,
          ...(withEvents ? { incrementalEveryWithEvents: settings.incrementalEveryWithEvents } : {})
        })
        if (decision._tag === "UpToDate") {
          const report: StreamReport = {
            stream: stream.name,
            kind: "none",
            outcome: "up-to-date",
            resumed: false,
            counts: zeroCounts,
            durationMs: 0,
            nextFullPassAt: decision.nextFullPassAt,
            ...(decision.nextIncrementalAt ? { nextIncrementalAt: decision.nextIncrementalAt } : {})
          }
          return { report, classified: { outcome: "succeeded" } } satisfies StreamRunResult
        }
        const kind = passKindOf(decision)
        const variables = decision._tag === "Incremental" ? decision.pass.variables : stream.fullPass
        const endsAfter = decision._tag === "Incremental" ? decision.pass.endsAfter : () => false
        const runId = yield* Effect.orDie(runs.start(accountId, stream.name, kind))
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
        const snapshot = Effect.flatMap(Ref.get(counts), withBudget)
        // what the progress display shows beside the counts: the service's count (a full pass, asked at its start when
        // the display shows totals) and the rows an earlier run of a resumed pass landed
        let expectedRows: number | undefined
        let landedBefore = 0
        const estimatedPointsPerRow = requestedPointsPerRow(stream)
        const showProgress = (c: RunCounts, done?: string) =>
          Effect.flatMap(budget.stats(accountId), (stats) =>
            progress.report({
              accountId,
              accountName,
              stream: stream.name,
              streamNumber,
              streams,
              kind,
              runId,
              counts: c,
              startedAtMs: now,
              landedBefore,
              pointsPerRow: c.rows > 0 && c.costPoints > 0 ? c.costPoints / c.rows : estimatedPointsPerRow,
              ...(expectedRows === undefined ? {} : { expectedRows }),
              ...(stats.bucket === undefined ? {} : { bucket: stats.bucket }),
              ...(done === undefined ? {} : { done })
            })
          )

        const body = Effect.gen(function* () {
          const begun = yield* checkpoints.begin(accountId, stream, kind, { restart: restart && mode === "backfill" })
          yield* Ref.set(resumed, begun.resumed)
          if (begun.resumed) yield* Effect.logInfo(`resuming the full pass from its checkpoint (row ${begun.checkpoint.position})`)
          landedBefore = begun.checkpoint.position
          if (kind === "full" && progress.wantsTotals) {
            // one cheap query (first: 1 and totalCount); without it the display shows rows landed and no total
            expectedRows = yield* pager.count(credentials, stream, variables).pipe(
              Effect.map((c) => c.total),
              Effect.orElseSucceed(() => undefined)
            )
          }
          yield* showProgress(yield* snapshot)
          let passNewest: number | undefined
          let shifted = begun.checkpoint.shifted
          let reachedEnd = false
          let progressWrittenAt = now
          const { partition, position, anchors } = begun.checkpoint
          const source = pager.pages({ credentials, stream, variables, partition, position, anchors })
          yield* pageBatches(source, { prefetch }).pipe(
            Stream.mapEffect((batch) =>
              Effect.gen(function* () {
                // the batch's pages up to the one that ends the pass (the rest are not landed)
                const landing: Array<Page> = []
                let finishesPass = false
                let batchNewest: number | undefined
                for (const page of batch) {
                  const fresh = page.nodes.slice(page.newFrom)
                  const summary: PageSummary = {
                    updatedAtMs: stream.updatedAt ? fresh.map((n) => Date.parse(stream.updatedAt!(n.node))) : [],
                    hasNextPage: page.mayHaveMore
                  }
                  const newest = newestOf(summary.updatedAtMs)
                  if (newest !== undefined) {
                    passNewest = Math.max(passNewest ?? newest, newest)
                    batchNewest = Math.max(batchNewest ?? newest, newest)
                  }
                  // a page that could not be checked may hide a gap: the pass's end lists the ids before any sweep
                  shifted ||= page.shifted || !page.checked
                  landing.push(page)
                  if (!page.mayHaveMore || endsAfter(summary)) {
                    finishesPass = true
                    reachedEnd = !page.mayHaveMore
                    break
                  }
                }
                const last = landing[landing.length - 1]!
                // the rows read again to join are landed again too (unchanged, they are not rewritten): the bodies stay usable
                const nodes = landing.length === 1 ? last.nodes : landing.flatMap((page) => page.nodes)
                const fresh = landing.reduce((n, page) => n + page.nodes.length - page.newFrom, 0)
                const highWater = batchHighWater(kind, batchNewest, passNewest)
                // the records an incremental pass finds changed (updated since its mark less the overlap; the page that
                // ends it holds older ones too): the rows of other streams that hold their data (a visit's line items
                // are its job's) are read again and landed before the batch, so a run that dies between the two reads
                // them again with it. A full pass leaves them to their own stream's passes.
                if (decision._tag === "Incremental") {
                  const since = decision.since
                  const changed = landing
                    .flatMap((page) => page.nodes.slice(page.newFrom))
                    .filter((n) => stream.updatedAt === undefined || Date.parse(stream.updatedAt(n.node)) >= since.getTime())
                  if (changed.length > 0) {
                    const reads = yield* dependents.read(credentials, stream, changed.map((n) => n.node.id), since)
                    yield* dependents.land(accountId, reads, new Date(yield* Clock.currentTimeMillis))
                  }
                }
                // a committed batch is counted even when the run is being interrupted, so the run's row tells the truth
                const c = yield* warehouse
                  .land({
                    accountId,
                    stream,
                    nodes,
                    bodies: landing.map((page) => page.body),
                    pass: {
                      kind,
                      partition: last.partition,
                      position: last.position,
                      anchors: last.nodes.slice(-anchorsKept).map((n) => n.node.id),
                      shifted,
                      highWaterMark: highWater === undefined ? null : new Date(highWater).toISOString()
                    },
                    endsPass: finishesPass && kind === "incremental",
                    fetchedAt: new Date(Math.min(...landing.map((page) => page.fetchedAtMs)))
                  })
                  .pipe(
                    Effect.tap((written) =>
                      Effect.all([
                        Metric.incrementBy(Metrics.forAccount(Metrics.pagesCommitted, accountId), landing.length),
                        Metric.incrementBy(Metrics.forAccount(Metrics.rowsUpserted, accountId), written)
                      ])
                    ),
                    Effect.withSpan("sync.page", { attributes: { accountId, stream: stream.name, pages: landing.length, rows: nodes.length } }),
                    Effect.flatMap((written) =>
                      Ref.updateAndGet(counts, (c) => ({
                        ...c,
                        pages: c.pages + landing.length,
                        rows: c.rows + fresh,
                        rowsWritten: c.rowsWritten + written,
                        overheadPoints: c.overheadPoints + landing.reduce((p, page) => p + page.overheadPoints, 0)
                      }))
                    ),
                    Effect.uninterruptible,
                    Effect.flatMap(withBudget)
                  )
                const landedAt = yield* Clock.currentTimeMillis
                if (landedAt - progressWrittenAt >= progressEveryMs) {
                  yield* runs.progress(runId, c)
                  progressWrittenAt = landedAt
                }
                yield* showProgress(c)
                return finishesPass
              })
            ),
            Stream.takeUntil((finished) => finished),
            Stream.runDrain
          )
          if (kind === "full" && reachedEnd) {
            const end = yield* passEnd.finish({ credentials, stream, variables, shifted, tracksSeen: begun.checkpoint.tracksSeen })
            yield* Ref.update(counts, (c) => ({
              ...c,
              rowsDeleted: c.rowsDeleted + end.deleted,
              rowsConfirmed: c.rowsConfirmed + end.confirmed,
              overheadPoints: c.overheadPoints + end.overheadPoints
            }))
          }
        })

        // recorded as the run ends, however it ends (an interrupted run too: the finalizer runs uninterruptibly)
        const record = (exit: Exit.Exit<void, StreamError>) =>
          Effect.gen(function* () {
            const classified = classify(exit)
            const c = yield* snapshot
            yield* runs.finish(runId, classified.outcome, c, classified.error).pipe(Effect.ignore)
            yield* Metric.increment(Metric.tagged(Metrics.forAccount(Metrics.runsFinished, accountId), "outcome", classified.outcome))
            yield* showProgress(c, classified.outcome)
          })
        const exit = yield* body.pipe(Effect.annotateLogs({ runId }), Effect.onExit(record), Effect.exit)
        const classified = classify(exit)
        const report: StreamReport = {
          stream: stream.name,
          kind,
          outcome: classified.outcome,
          resumed: yield* Ref.get(resumed),
          counts: yield* snapshot,
          durationMs: (yield* Clock.currentTimeMillis) - now,
          ...(classified.error ? { error: classified.error } : {})
        }
        return { report, classified } satisfies StreamRunResult
      }).pipe(Effect.annotateLogs({ stream: stream.name }), Effect.withSpan("sync.stream", { attributes: { accountId: credentials.accountId, stream: stream.name } }))

    return StreamRun.of({ run })
  })
)
