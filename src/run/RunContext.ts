import { Effect, Ref } from "effect"
import type { CostBudget } from "../api/CostBudget.js"
import { eventsBetweenPages } from "../changes/betweenPages.js"
import type { EventConsumer } from "../changes/EventConsumer.js"
import type { EventQueue } from "../changes/EventQueue.js"
import type { PassKind, Variables } from "../sync/model.js"
import { makePageGate, type PageGate } from "../sync/paging/Pager.js"
import type { BegunPass } from "../sync/pass/Checkpoints.js"
import { passKindOf, type PassToMake } from "../sync/pass/PassPlan.js"
import { type PassRules, passRules } from "../sync/pass/PassState.js"
import type { Progress } from "./Progress.js"
import { requestedPointsPerRow } from "./progressEstimate.js"
import { type RunCounts, zeroCounts } from "./Runs.js"
import type { StreamRunRequest } from "./streamRunRequest.js"

/**
 * What the progress display shows beside the counts: the rows an earlier run of a resumed pass landed, and the
 * service's count of the rows (a full pass, asked at its start when the display shows totals).
 */
export interface Shown {
  readonly landedBefore: number
  readonly expectedRows?: number
}

/** One stream's pass, as the parts of its run share it. */
export interface RunContext {
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
  /** The counts the run's end was written with by the statement of the batch that ended its pass (Runs.finishStep). */
  readonly finishedWith: Ref.Ref<RunCounts | undefined>
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
export interface Started {
  readonly runId: number
  readonly begun: BegunPass | undefined
}

export const snapshot = (p: RunContext) => Effect.flatMap(Ref.get(p.counts), p.withBudget)

/** The services a run's context reads: the cost budget, the progress display, the account's change events. */
export interface RunContextServices {
  readonly budget: CostBudget["Type"]
  readonly progress: Progress["Type"]
  readonly events: EventQueue["Type"]
  readonly consumer: EventConsumer["Type"]
}

/** What the parts of a run share: its row, its counts, what the progress display shows. */
export const makeRunContext =
  ({ budget, progress, events, consumer }: RunContextServices) =>
  (request: StreamRunRequest, decision: PassToMake, { runId, begun }: Started, startedAtMs: number) =>
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
      finishedWith: yield* Ref.make<RunCounts | undefined>(undefined),
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
