import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Context, Duration, Effect, Either, Exit, Layer, Metric, Option, Ref } from "effect"
import { CostBudget } from "../api/CostBudget.js"
import { DatabaseTopology } from "../db/Database.js"
import { joinedAlongside, type ReadAlongside } from "../db/readAlongside.js"
import * as Metrics from "../observability/metrics.js"
import { Checkpoints } from "../sync/pass/Checkpoints.js"
import type { AccountLockLost } from "../sync/errors.js"
import { Dependents } from "../sync/pass/Dependents.js"
import { EventQueue } from "../changes/EventQueue.js"
import type { PassKind } from "../sync/model.js"
import { EventConsumer } from "../changes/EventConsumer.js"
import { Pager } from "../sync/paging/Pager.js"
import { PassEnd } from "../sync/pass/PassEnd.js"
import { decidePass, passKindOf, type PassToMake } from "../sync/pass/PassPlan.js"
import { makeLandPass } from "./landPass.js"
import { Progress } from "./Progress.js"
import { makeRunContext as makeContext, type RunContext, snapshot, type Started } from "./RunContext.js"
import { classify, type StreamError } from "../sync/RunOutcome.js"
import { runHeartbeatEvery, Runs, sameCounts, zeroCounts } from "./Runs.js"
import type { DecisionInputs, StreamRunRequest } from "./streamRunRequest.js"
import { type StreamReport, type StreamRunResult, upToDate } from "./streamRunResult.js"
import type { AnyStream } from "../sync/streams/Stream.js"
import { fullPassCadence, SyncSettings } from "../sync/SyncSettings.js"
import { Warehouse } from "../sync/landing/Warehouse.js"
import { runSpan } from "../observability/spans.js"

/** One stream of one account: plan the pass, page, land each batch with its checkpoint, record the run. */
export class StreamRun extends Context.Tag("account-sync/StreamRun")<
  StreamRun,
  {
    readonly run: (request: StreamRunRequest) => Effect.Effect<StreamRunResult>
    /**
     * The decision inputs of all of an account's `streams` in one statement (its checkpoints, its events), by stream;
     * `alongside`, another module's read, carried by that statement.
     */
    readonly decisionInputs: (
      accountId: string,
      streams: ReadonlyArray<AnyStream>,
      alongside?: ReadAlongside
    ) => Effect.Effect<ReadonlyMap<string, DecisionInputs>, SqlError.SqlError>
  }
>() {}

/** The wall clock, for what is measured against the database's clock rather than the program's (the run's heartbeat). */
const realClock = Clock.make()

export const StreamRunLive = Layer.effect(
  StreamRun,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const checkpoints = yield* Checkpoints
    const warehouse = yield* Warehouse
    const runs = yield* Runs
    const pager = yield* Pager
    const passEnd = yield* PassEnd
    const dependents = yield* Dependents
    const budget = yield* CostBudget
    const progress = yield* Progress
    const settings = yield* SyncSettings
    const { singleSession } = yield* DatabaseTopology

    const events = yield* EventQueue
    const consumer = yield* EventConsumer
    const makeRunContext = makeContext({ budget, progress, events, consumer })
    const landPass = makeLandPass({ checkpoints, warehouse, runs, pager, passEnd, dependents, progress, singleSession })
    /** The stream's change events flow for the account: one that arrived within SYNC_INCREMENTAL_EVERY_WITH_EVENTS was applied. */
    const eventsCount = (stream: AnyStream) => stream.topic !== undefined && Duration.toMillis(settings.incrementalEveryWithEvents) > 0
    const eventsFlow = (appliedAt: Date | null, now: number) => appliedAt !== null && now - appliedAt.getTime() < Duration.toMillis(settings.incrementalEveryWithEvents)

    const decisionInputs = (accountId: string, streams: ReadonlyArray<AnyStream>, alongside?: ReadAlongside) =>
      Effect.gen(function* () {
        const topics = [...new Set(streams.filter(eventsCount).map((s) => s.topic!))]
        const lastApplied = events.lastAppliedQuery(accountId, topics)
        // one statement: the checkpoints with when each topic's latest event was applied (and the read alongside)
        const read = yield* checkpoints.forAccountWith(accountId, alongside ? joinedAlongside(sql, lastApplied, alongside.query) : lastApplied)
        const byStream = read.checkpoints
        if (alongside) yield* alongside.use(read.other)
        const applied = yield* events.lastAppliedFrom(read.other)
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

    /** Recorded as the run ends, however it ends (an interrupted run too: the finalizer runs uninterruptibly). */
    const recordRun = (p: RunContext) => (exit: Exit.Exit<void, StreamError>) =>
      Effect.gen(function* () {
        const classified = classify(exit)
        const c = yield* snapshot(p)
        // the statement of the batch that ended the pass wrote the run's end, unless something was counted since
        const written = yield* Ref.get(p.finishedWith)
        if (!(Exit.isSuccess(exit) && written !== undefined && sameCounts(written, c))) yield* runs.finish(p.runId, classified.outcome, c, classified.error).pipe(Effect.ignore)
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
        runSpan("sync.stream", { accountId: request.credentials.accountId, stream: request.stream.name })
      )

    return StreamRun.of({ run, decisionInputs })
  })
)