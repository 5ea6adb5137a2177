import type { SqlError } from "@effect/sql"
import { Clock, Context, Duration, Effect, Either, Exit, Layer, Metric, Option, Ref, Stream } from "effect"
import { CostBudget } from "../api/CostBudget.js"
import type { AccountCredentials } from "../api/ServiceClient.js"
import type { AccessTokenError } from "../auth/errors.js"
import { DatabaseTopology } from "../db/Database.js"
import * as Metrics from "../observability/metrics.js"
import { type BegunPass, Checkpoints } from "../sync/pass/Checkpoints.js"
import type { AccountLockLost } from "../sync/errors.js"
import { Dependents } from "../sync/pass/Dependents.js"
import { EventQueue } from "../changes/EventQueue.js"
import type { Checkpoint, Page, PassKind, Variables } from "../sync/model.js"
import { releaseBytes } from "../sync/landing/releaseBytes.js"
import { EventConsumer } from "../changes/EventConsumer.js"
import { eventsBetweenPages } from "../changes/betweenPages.js"
import { makePageGate, type PageGate, pageBatches, Pager } from "../sync/paging/Pager.js"
import { PassEnd } from "../sync/pass/PassEnd.js"
import { decidePass, type Mode, type PassDecision, passKindOf, type PassToMake } from "../sync/pass/PassPlan.js"
import { advance, type BatchStep, type PassRules, passRules, type PassState, passStarts } from "../sync/pass/PassState.js"
import { Progress } from "./Progress.js"
import { requestedPointsPerRow } from "./progressEstimate.js"
import { type Classified, classify, type RunOutcome, type StreamError } from "../sync/RunOutcome.js"
import { type RunCounts, runHeartbeatEvery, Runs, zeroCounts } from "./Runs.js"
import type { AnyStream } from "../sync/streams/Stream.js"
import { fullPassCadence, SyncSettings } from "../sync/SyncSettings.js"
import { rowsIn, Warehouse } from "../sync/landing/Warehouse.js"

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
  /** What decides the pass, read with the account's other streams' (`decisionInputs`); absent: read for this stream. */
  readonly inputs?: DecisionInputs
}

/** What decides a stream's pass besides the settings: its checkpoint and when its change events were last applied. */
export interface DecisionInputs {
  readonly checkpoint: Option.Option<Checkpoint>
  readonly eventsAppliedAt: Date | null
}

export interface StreamRunResult {
  readonly report: StreamReport
  readonly classified: Classified
  /** The pass asked for another stream's full pass (rows linked to records it found changed could not be read again). */
  readonly askedFullPass?: boolean
}

/** One stream of one account: plan the pass, page, land each batch with its checkpoint, record the run. */
export class StreamRun extends Context.Tag("account-sync/StreamRun")<
  StreamRun,
  {
    readonly run: (request: StreamRunRequest) => Effect.Effect<StreamRunResult>
    /** The decision inputs of all of an account's `streams` in two statements (its checkpoints, its events), by stream. */
    readonly decisionInputs: (accountId: string, streams: ReadonlyArray<AnyStream>) => Effect.Effect<ReadonlyMap<string, DecisionInputs>, SqlError.SqlError>
  }
>() {}

/**
 * Ms between two writes of a run's counts to `sync_runs` while it goes, on a single-session database (elsewhere its
 * heartbeat writes them, `runHeartbeatEvery`); its end writes the final counts.
 */
const progressEveryMs = 1000
/** The wall clock, for what is measured against the database's clock rather than the program's (the run's heartbeat). */
const realClock = Clock.make()

/**
 * What the progress display shows beside the counts: the rows an earlier run of a resumed pass landed, and the
 * service's count of the rows (a full pass, asked at its start when the display shows totals).
 */
interface Shown {
  readonly landedBefore: number
  readonly expectedRows?: number
}

/** One stream's pass, as the parts of its run share it. */
interface RunContext {
  readonly request: StreamRunRequest
  readonly accountId: string
  readonly kind: PassKind
  readonly rules: PassRules
  readonly variables: Variables
  readonly runId: number
  /** The pass begun with its run's row (an incremental pass), else begun by the pass's body. */
  readonly begun: BegunPass | undefined
  readonly startedAtMs: number
  // read by the run's end, however the run ends
  readonly counts: Ref.Ref<RunCounts>
  readonly resumed: Ref.Ref<boolean>
  readonly askedFullPass: Ref.Ref<boolean>
  readonly shown: Ref.Ref<Shown>
  /** The counts with the cost budget's use since the run began. */
  readonly withBudget: (c: RunCounts) => Effect.Effect<RunCounts>
  readonly show: (c: RunCounts, done?: string) => Effect.Effect<void>
  /** The pass's page fetches, paused while the account's change events are applied between two pages. */
  readonly gate: PageGate
  /** The account's due change events applied now, if it is time to look (see betweenPages). */
  readonly eventsBetweenPages: Effect.Effect<void>
}

/** A run's row written, and its pass begun with it (an incremental pass) or not yet. */
interface Started {
  readonly runId: number
  readonly begun: BegunPass | undefined
}

/** What landing the batches carries from one to the next: the pass, and when the counts were last written. */
interface BatchCarry {
  readonly pass: PassState
  readonly progressWrittenAt: number
}

const snapshot = (p: RunContext) => Effect.flatMap(Ref.get(p.counts), p.withBudget)

/** A stream not due for a pass. */
const upToDate = (stream: AnyStream, decision: Extract<PassDecision, { readonly _tag: "UpToDate" }>): StreamRunResult => ({
  report: {
    stream: stream.name,
    kind: "none",
    outcome: "up-to-date",
    resumed: false,
    counts: zeroCounts,
    durationMs: 0,
    nextFullPassAt: decision.nextFullPassAt,
    ...(decision.nextIncrementalAt ? { nextIncrementalAt: decision.nextIncrementalAt } : {})
  },
  classified: { outcome: "succeeded" }
})

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
    const { singleSession } = yield* DatabaseTopology
    const prefetch = !singleSession

    const events = yield* EventQueue
    const consumer = yield* EventConsumer
    /** The stream's change events flow for the account: one that arrived within SYNC_INCREMENTAL_EVERY_WITH_EVENTS was applied. */
    const eventsCount = (stream: AnyStream) => stream.topic !== undefined && Duration.toMillis(settings.incrementalEveryWithEvents) > 0
    const eventsFlow = (appliedAt: Date | null, now: number) => appliedAt !== null && now - appliedAt.getTime() < Duration.toMillis(settings.incrementalEveryWithEvents)

    const decisionInputs = (accountId: string, streams: ReadonlyArray<AnyStream>) =>
      Effect.gen(function* () {
        const byStream = yield* checkpoints.forAccount(accountId)
        const topics = [...new Set(streams.filter(eventsCount).map((s) => s.topic!))]
        const applied = yield* events.lastAppliedByTopic(accountId, topics)
        return new Map(
          streams.map((s) => [
            s.name,
            { checkpoint: Option.fromNullable(byStream.get(s.name)), eventsAppliedAt: eventsCount(s) ? (applied.get(s.topic!) ?? null) : null } satisfies DecisionInputs
          ])
        ) as ReadonlyMap<string, DecisionInputs>
      })

    /** The pass the stream needs now. */
    const decide = ({ credentials, stream, mode, inputs: known }: StreamRunRequest, nowMs: number) =>
      Effect.gen(function* () {
        const inputs = known ?? (yield* decisionInputs(credentials.accountId, [stream])).get(stream.name)!
        const withEvents = eventsFlow(inputs.eventsAppliedAt, nowMs)
        return decidePass({
          mode,
          incremental: stream.incremental,
          checkpoint: inputs.checkpoint,
          nowMs,
          fullPassEvery: fullPassCadence(settings, stream),
          overlap: settings.incrementalOverlap,
          ...(withEvents ? { incrementalEveryWithEvents: settings.incrementalEveryWithEvents } : {})
        })
      })

    /** A run that could not begin (its checkpoint or its run's row could not be read or written): failed, and recorded so where the database lets it. */
    const notStarted = ({ credentials, stream }: StreamRunRequest, kind: PassKind, error: SqlError.SqlError | AccountLockLost, startedAtMs: number) =>
      Effect.gen(function* () {
        const classified = classify(Exit.fail(error))
        yield* runs.failedBeforeStart(credentials.accountId, stream.name, kind, classified.error ?? error.message).pipe(Effect.ignore)
        const report: StreamReport = {
          stream: stream.name,
          kind,
          outcome: classified.outcome,
          resumed: false,
          counts: zeroCounts,
          durationMs: (yield* Clock.currentTimeMillis) - startedAtMs,
          ...(classified.error ? { error: classified.error } : {})
        }
        return { report, classified } satisfies StreamRunResult
      })

    /** What the parts of a run share: its row, its counts, what the progress display shows. */
    const makeRunContext = (request: StreamRunRequest, decision: PassToMake, { runId, begun }: Started, startedAtMs: number) =>
      Effect.gen(function* () {
        const { accountId } = request.credentials
        const kind = passKindOf(decision)
        const before = yield* budget.stats(accountId)
        const shown = yield* Ref.make<Shown>({ landedBefore: 0 })
        const estimatedPointsPerRow = requestedPointsPerRow(request.stream)
        const gate = yield* makePageGate
        const show = (c: RunCounts, done?: string) =>
          Effect.flatMap(Effect.zip(budget.stats(accountId), Ref.get(shown)), ([stats, { landedBefore, expectedRows }]) =>
            progress.report({
              accountId,
              accountName: request.accountName,
              stream: request.stream.name,
              streamNumber: request.streamNumber,
              streams: request.streams,
              kind,
              runId,
              counts: c,
              startedAtMs,
              landedBefore,
              pointsPerRow: c.rows > 0 && c.costPoints > 0 ? c.costPoints / c.rows : estimatedPointsPerRow,
              requestedPointsPerRow: estimatedPointsPerRow,
              ...(expectedRows === undefined ? {} : { expectedRows }),
              ...(stats.bucket === undefined ? {} : { bucket: stats.bucket }),
              ...(done === undefined ? {} : { done })
            })
          )
        return {
          request,
          accountId,
          kind,
          rules: passRules(decision, request.stream.updatedAt),
          variables: decision._tag === "Incremental" ? decision.pass.variables : request.stream.fullPass,
          runId,
          begun,
          startedAtMs,
          counts: yield* Ref.make<RunCounts>(zeroCounts),
          resumed: yield* Ref.make(false),
          askedFullPass: yield* Ref.make(false),
          shown,
          withBudget: (c: RunCounts) =>
            Effect.map(budget.stats(accountId), (after) => ({
              ...c,
              costPoints: after.pointsUsed - before.pointsUsed,
              throttleWaitMs: after.waitedMs - before.waitedMs,
              throttled: after.throttled - before.throttled
            })),
          show,
          gate,
          eventsBetweenPages: yield* eventsBetweenPages(events, consumer, accountId, gate)
        } satisfies RunContext
      })

    /** The batch's pages in one transaction with their checkpoint; the batch that ends an incremental pass ends it there too. */
    const landPages = (p: RunContext, { landing, progress: pass, ends }: BatchStep) => {
      const { accountId } = p
      const fresh = landing.reduce((n, page) => n + page.nodes.length - page.newFrom, 0)
      const batch = {
        accountId,
        stream: p.request.stream,
        // the rows read again to join are landed again too (unchanged, they are not rewritten)
        pages: landing,
        // the batch that ends an incremental pass ends it in its own statement (the mark moves with it)
        pass: ends === "with-batch" ? { ...pass, endsIncremental: true } : pass,
        fetchedAt: new Date(Math.min(...landing.map((page) => page.fetchedAtMs)))
      }
      return warehouse
        .land(batch)
        .pipe(
          // the bodies are not read again once their rows have landed
          Effect.tap(() => Effect.sync(() => landing.forEach((page) => page.body !== undefined && releaseBytes(page.body)))),
          Effect.tap((written) =>
            Effect.all([
              Metric.incrementBy(Metrics.forAccount(Metrics.pagesCommitted, accountId), landing.length),
              Metric.incrementBy(Metrics.forAccount(Metrics.rowsUpserted, accountId), written)
            ])
          ),
          Effect.withSpan("sync.page", { attributes: { accountId, stream: p.request.stream.name, pages: landing.length, rows: rowsIn(landing) } }),
          // a committed batch is counted even when the run is being interrupted, so the run's row tells the truth
          Effect.flatMap((written) =>
            Ref.updateAndGet(p.counts, (c) => ({
              ...c,
              pages: c.pages + landing.length,
              rows: c.rows + fresh,
              rowsWritten: c.rowsWritten + written,
              overheadPoints: c.overheadPoints + landing.reduce((n, page) => n + page.overheadPoints, 0)
            }))
          ),
          Effect.uninterruptible,
          Effect.flatMap(p.withBudget)
        )
    }

    /**
     * One batch of the pass: folded into it (PassState), the rows of other streams that hold the data of the records
     * an incremental pass finds changed (a visit's line items are its job's) read again and landed before it (a run that
     * dies between the two reads them again with it), the batch landed, the counts written now and then.
     */
    const landBatch = (p: RunContext, { pass, progressWrittenAt }: BatchCarry, batch: ReadonlyArray<Page>) =>
      Effect.gen(function* () {
        const step = advance(pass, batch, p.rules)
        if (step.changed.length > 0 && p.rules.since !== undefined) {
          const reads = yield* dependents.read(p.request.credentials, p.request.stream, step.changed, p.rules.since)
          yield* dependents.land(p.accountId, reads, new Date(yield* Clock.currentTimeMillis))
          // Dependents.land asks for a full pass of a stream whose rows it could not read again
          if (reads.some((r) => r.unreachable.length > 0)) yield* Ref.set(p.askedFullPass, true)
        }
        const c = yield* landPages(p, step)
        // after the pass's last batch there is no next page to wait for: its events are the events job's, as the lease frees
        if (!step.finishes) yield* p.eventsBetweenPages
        const landedAt = yield* Clock.currentTimeMillis
        // the heartbeat writes the counts where there is one; the batch that ends a pass leaves them to the run's end
        const writeCounts = singleSession && !step.finishes && landedAt - progressWrittenAt >= progressEveryMs
        if (writeCounts) yield* runs.progress(p.runId, c)
        yield* p.show(c)
        return [{ pass: step.state, progressWrittenAt: writeCounts ? landedAt : progressWrittenAt }, step] as const
      })

    /** The pass: begun (or resumed), its batches landed in order up to the one that ends it, a full pass's end checked. */
    const landPass = (p: RunContext) =>
      Effect.gen(function* () {
        const { credentials, stream, mode, restart } = p.request
        const begun = p.begun ?? (yield* checkpoints.begin(p.accountId, stream, p.kind, { restart: restart && mode === "backfill" }))
        yield* Ref.set(p.resumed, begun.resumed)
        if (begun.resumed) yield* Effect.logInfo(`resuming the full pass from its checkpoint (row ${begun.checkpoint.position})`)
        // one cheap query (first: 1 and totalCount); without it the display shows rows landed and no total
        const expectedRows =
          p.kind === "full" && progress.wantsTotals
            ? yield* pager.count(credentials, stream, p.variables).pipe(
                Effect.map((c) => c.total),
                Effect.orElseSucceed(() => undefined)
              )
            : undefined
        yield* Ref.set(p.shown, { landedBefore: begun.checkpoint.position, ...(expectedRows === undefined ? {} : { expectedRows }) })
        yield* Effect.flatMap(snapshot(p), (c) => p.show(c))
        const { partition, position, anchors } = begun.checkpoint
        const start: BatchCarry = { pass: passStarts(begun.checkpoint.shifted), progressWrittenAt: p.startedAtMs }
        const last = yield* pageBatches(pager.pages({ credentials, stream, variables: p.variables, partition, position, anchors, gate: p.gate }), { prefetch }).pipe(
          Stream.mapAccumEffect(start, (landing, batch) => landBatch(p, landing, batch)),
          Stream.takeUntil((step) => step.finishes),
          Stream.runLast
        )
        if (Option.isSome(last) && last.value.ends === "with-sweep") {
          const { shifted } = last.value.state
          const end = yield* passEnd.finish({ credentials, stream, variables: p.variables, shifted, tracksSeen: begun.checkpoint.tracksSeen })
          yield* Ref.update(p.counts, (c) => ({
            ...c,
            rowsDeleted: c.rowsDeleted + end.deleted,
            rowsConfirmed: c.rowsConfirmed + end.confirmed,
            overheadPoints: c.overheadPoints + end.overheadPoints
          }))
        }
      })

    /** Recorded as the run ends, however it ends (an interrupted run too: the finalizer runs uninterruptibly). */
    const recordRun = (p: RunContext) => (exit: Exit.Exit<void, StreamError>) =>
      Effect.gen(function* () {
        const classified = classify(exit)
        const c = yield* snapshot(p)
        yield* runs.finish(p.runId, classified.outcome, c, classified.error).pipe(Effect.ignore)
        yield* Metric.increment(Metric.tagged(Metrics.forAccount(Metrics.runsFinished, p.accountId), "outcome", classified.outcome))
        yield* p.show(c, classified.outcome)
      })

    /**
     * While the pass runs, its row says its process is alive (`status` shows a row whose beats stopped as interrupted),
     * with its counts so far: one write per beat for a fleet of passes, not one per page.
     * Not on a single-session database: a beat must not land inside a page's open transaction, and one process owns it.
     */
    const withHeartbeat =
      (p: RunContext) =>
      <A, E, R>(pass: Effect.Effect<A, E, R>) =>
        singleSession
          ? pass
          : Effect.scoped(
              Effect.zipRight(
                // on the real clock: the beat is compared with the database's now(), and a test's clock must not see its sleeps
                Effect.forkScoped(
                  Effect.withClock(Effect.forever(Effect.delay(Effect.flatMap(snapshot(p), (c) => runs.beat(p.runId, c)).pipe(Effect.timeout("10 seconds"), Effect.ignore), runHeartbeatEvery)), realClock)
                ),
                pass
              )
            )

    /** The pass made, recorded and reported: whatever happens in it, the run has an outcome. */
    const recordedPass = (request: StreamRunRequest, decision: PassToMake, started: Started, startedAtMs: number) =>
      Effect.gen(function* () {
        const p = yield* makeRunContext(request, decision, started, startedAtMs)
        const { runId } = started
        const exit = yield* landPass(p).pipe(withHeartbeat(p), Effect.annotateLogs({ runId }), Effect.onExit(recordRun(p)), Effect.exit)
        const classified = classify(exit)
        const report: StreamReport = {
          stream: request.stream.name,
          kind: p.kind,
          outcome: classified.outcome,
          resumed: yield* Ref.get(p.resumed),
          counts: yield* snapshot(p),
          durationMs: (yield* Clock.currentTimeMillis) - startedAtMs,
          ...(classified.error ? { error: classified.error } : {})
        }
        return { report, classified, askedFullPass: yield* Ref.get(p.askedFullPass) } satisfies StreamRunResult
      })

    const run = (request: StreamRunRequest) =>
      Effect.gen(function* () {
        const { credentials, stream, mode } = request
        const startedAtMs = yield* Clock.currentTimeMillis
        const decided = yield* Effect.either(decide(request, startedAtMs))
        if (Either.isLeft(decided)) return yield* notStarted(request, mode === "backfill" ? "full" : "incremental", decided.left, startedAtMs)
        const decision = decided.right
        if (decision._tag === "UpToDate") return upToDate(stream, decision)
        const kind = passKindOf(decision)
        // an incremental pass has nothing to resume: its checkpoint is begun with its run's row, in one statement
        const start: Effect.Effect<Started, SqlError.SqlError | AccountLockLost> =
          kind === "incremental"
            ? Effect.flatMap(runs.startStatement(credentials.accountId, stream.name, kind), (run) => checkpoints.beginIncremental(credentials.accountId, stream, run))
            : Effect.map(runs.start(credentials.accountId, stream.name, kind), (runId) => ({ runId, begun: undefined }))
        const started = yield* Effect.either(start)
        if (Either.isLeft(started)) return yield* notStarted(request, kind, started.left, startedAtMs)
        return yield* recordedPass(request, decision, started.right, startedAtMs)
      }).pipe(
        Effect.annotateLogs({ stream: request.stream.name }),
        Effect.withSpan("sync.stream", { attributes: { accountId: request.credentials.accountId, stream: request.stream.name } })
      )

    return StreamRun.of({ run, decisionInputs })
  })
)
