import { Clock, Effect, Metric, Option, Ref, Stream } from "effect"
import * as Metrics from "../observability/metrics.js"
import { releaseBytes } from "../sync/landing/releaseBytes.js"
import { rowsIn, type Warehouse } from "../sync/landing/Warehouse.js"
import type { Page } from "../sync/model.js"
import { pageBatches, type Pager } from "../sync/paging/Pager.js"
import { batchLanded, pagingStopRequested } from "../sync/paging/pagingStop.js"
import type { Checkpoints } from "../sync/pass/Checkpoints.js"
import type { Dependents } from "../sync/pass/Dependents.js"
import type { PassEnd } from "../sync/pass/PassEnd.js"
import { advance, type BatchStep, type PassRules, type PassState, passStarts } from "../sync/pass/PassState.js"
import type { Progress } from "./Progress.js"
import { type RunContext, snapshot } from "./RunContext.js"
import type { RunCounts, Runs } from "./Runs.js"
import { runSpan } from "../observability/spans.js"

/**
 * Ms between two writes of a run's counts to `sync_runs` while it goes, on a single-session database (elsewhere its
 * heartbeat writes them, `runHeartbeatEvery`); its end writes the final counts.
 */
const progressEveryMs = 1000

/** What landing the batches carries from one to the next: the pass, and when the counts were last written. */
interface BatchCarry {
  readonly pass: PassState
  readonly progressWrittenAt: number
}

/** What landing a pass reads: the services, and the database's topology (`singleSession`: no page fetched while another lands). */
export interface LandPassServices {
  readonly checkpoints: Checkpoints["Type"]
  readonly warehouse: Warehouse["Type"]
  readonly runs: Runs["Type"]
  readonly pager: Pager["Type"]
  readonly passEnd: PassEnd["Type"]
  readonly dependents: Dependents["Type"]
  readonly progress: Progress["Type"]
  readonly singleSession: boolean
}

/** Each landed row's updatedAt as the pass read it (none where the stream has no updatedAt). */
const asRead = (pages: ReadonlyArray<Page>, updatedAt: PassRules["updatedAt"]): ReadonlyMap<string, string> | undefined =>
  updatedAt === undefined ? undefined : new Map(pages.flatMap((page) => page.nodes.map((n) => [n.node.id, updatedAt(n.node)] as const)))

/** The pass of a run (`landPass`), its batches landed with their checkpoints. */
export const makeLandPass = ({ checkpoints, warehouse, runs, pager, passEnd, dependents, progress, singleSession }: LandPassServices) => {
  // on a single-session database statements must never overlap: no page is fetched while another lands
  const prefetch = !singleSession

  /**
   * The batch's pages in one transaction with their checkpoint; the batch that ends an incremental pass ends it there
   * too, and its run's row with it (the counts it will have, the rows written counted in the statement).
   */
  const landPages = (p: RunContext, { landing, progress: pass, ends }: BatchStep) =>
    Effect.gen(function* () {
      const { accountId } = p
      const fresh = landing.reduce((n, page) => n + page.nodes.length - page.newFrom, 0)
      const overhead = landing.reduce((n, page) => n + page.overheadPoints, 0)
      const added = (c: RunCounts, written: number): RunCounts => ({
        ...c,
        pages: c.pages + landing.length,
        rows: c.rows + fresh,
        rowsWritten: c.rowsWritten + written,
        overheadPoints: c.overheadPoints + overhead
      })
      const ending = ends === "with-batch" ? yield* Effect.flatMap(Ref.get(p.counts), (c) => p.withBudget(added(c, 0))) : undefined
      const batch = {
        accountId,
        stream: p.request.stream,
        // the rows read again to join are landed again too (unchanged, they are not rewritten)
        pages: landing,
        // the batch that ends an incremental pass ends it in its own statement (the mark moves with it)
        pass: ends === "with-batch" ? { ...pass, endsIncremental: true } : pass,
        fetchedAt: new Date(Math.min(...landing.map((page) => page.fetchedAtMs))),
        ...(ending === undefined ? {} : { then: [runs.finishStep(p.runId, ending)] })
      }
      return yield* warehouse
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
          runSpan("sync.page", { accountId, stream: p.request.stream.name, pages: landing.length, rows: rowsIn(landing) }),
          // a committed batch is counted even when the run is being interrupted, so the run's row tells the truth
          Effect.tap((written) => (ending === undefined ? Effect.void : Ref.set(p.finishedWith, { ...ending, rowsWritten: ending.rowsWritten + written }))),
          Effect.flatMap((written) => Ref.updateAndGet(p.counts, (c) => added(c, written))),
          Effect.uninterruptible,
          Effect.flatMap(p.withBudget)
        )
    })

  /**
   * One batch of the pass: folded into it (PassState), the rows of other streams that hold the data of the records
   * an incremental pass finds changed (a visit's line items are its job's) read again and landed before it (a run that
   * dies between the two reads them again with it), the batch landed, the counts written now and then.
   */
  const landBatch = (p: RunContext, { pass, progressWrittenAt }: BatchCarry, batch: ReadonlyArray<Page>) =>
    Effect.gen(function* () {
      const step = advance(pass, batch, p.rules)
      if (step.changed.length > 0 && p.rules.since !== undefined) {
        const reads = yield* dependents.read(p.request.credentials, p.request.stream, step.changed, p.rules.since, asRead(step.landing, p.rules.updatedAt))
        yield* dependents.land(p.accountId, reads, new Date(yield* Clock.currentTimeMillis))
        // Dependents.land asks for a full pass of a stream whose rows it could not read again
        if (reads.some((r) => r.unreachable.length > 0)) yield* Ref.set(p.askedFullPass, true)
      }
      const c = yield* landPages(p, step)
      yield* batchLanded
      // after an incremental pass's last batch (an idle cycle's only one) its events are the events job's, as the lease
      // frees; after a full pass's, the run may still hold the account for the pass's sweep and the next streams' passes
      if (!step.finishes || p.kind === "full") yield* p.eventsBetweenPages
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
      // asked to stop asking for pages (a worker's slice ended): what was fetched has landed, and the pass stops
      // there, interrupted, resumed from that batch's checkpoint by the account's next job
      if (!(Option.isSome(last) && last.value.finishes) && (yield* pagingStopRequested)) return yield* Effect.interrupt
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

  return landPass
}
