import type { DocumentNode } from "graphql"
import { Clock, Context, Duration, Effect, Layer, Metric, Ref } from "effect"
import * as Metrics from "../observability/metrics.js"
import { staticQueryCost } from "./costEstimate.js"
import { idle } from "./idleWait.js"
import { operationName } from "./documents.js"
import type { QueryCost } from "./errors.js"

/** What the budget did for one account so far: these go into `sync_runs` and the progress line. */
export interface BudgetStats {
  /** Sum of `actualQueryCost` of answered queries. */
  readonly pointsUsed: number
  /**
   * Time during which the account's queries waited for the bucket to refill (before queries and after THROTTLED
   * answers): queries waiting at once (a page fetched ahead) count once, so it never exceeds the time that passed.
   */
  readonly waitedMs: number
  /** THROTTLED answers received (the goal is zero in steady state). */
  readonly throttled: number
  /** The bucket as mirrored now (after the account's first answer): its restore rate and the points it holds. */
  readonly bucket?: { readonly restoreRate: number; readonly available: number }
}

interface Bucket {
  readonly maximum: number
  readonly restoreRate: number
  /** Points at `at` (may be negative: reservations not yet restored). */
  readonly available: number
  readonly at: number
}

interface AccountState {
  readonly bucket: Bucket | undefined
  /** Per operation: last requestedQueryCost seen / our static estimate for the same variables. */
  readonly corrections: ReadonlyMap<string, number>
  readonly stats: BudgetStats
  /** Until when a query is known to wait (Clock ms): a wait that overlaps this adds only what lies beyond it. */
  readonly waitedUntil: number
}

const emptyState: AccountState = { bucket: undefined, corrections: new Map(), stats: { pointsUsed: 0, waitedMs: 0, throttled: 0 }, waitedUntil: 0 }

export interface CostBudgetShape {
  /** The cost the service will most likely request for this query (static rule, corrected by what it last requested). */
  readonly estimate: (accountId: string, document: DocumentNode, variables: Readonly<Record<string, unknown>>) => Effect.Effect<number>
  /**
   * The largest page size up to `maxPageSize` whose estimated cost fits the account's maximum bucket; with `fit: "now"`,
   * what the bucket holds now (at least a quarter of its maximum: a low bucket does not split a query into many).
   */
  readonly pageSize: (
    accountId: string,
    document: DocumentNode,
    variablesFor: (first: number) => Readonly<Record<string, unknown>>,
    maxPageSize: number,
    fit?: "full" | "now"
  ) => Effect.Effect<number>
  /** Reserves `cost` points, sleeping (on the Clock) until the mirrored bucket holds them. */
  readonly acquire: (accountId: string, cost: number) => Effect.Effect<void>
  /**
   * Sleeps (on the Clock) until the mirrored bucket holds `cost` points, reserving none: a caller that must not hold
   * something while it waits for points (a pass's page gate) waits here first, then `acquire` finds them.
   */
  readonly room: (accountId: string, cost: number) => Effect.Effect<void>
  /** Mirrors the bucket from an answer's `extensions.cost` and learns the correction for the document. */
  readonly observe: (
    accountId: string,
    document: DocumentNode,
    variables: Readonly<Record<string, unknown>>,
    cost: QueryCost
  ) => Effect.Effect<void>
  /** Records a THROTTLED answer: the bucket is mirrored, so the next `acquire` waits exactly deficit / restoreRate. */
  readonly throttled: (
    accountId: string,
    document: DocumentNode,
    variables: Readonly<Record<string, unknown>>,
    cost: QueryCost | undefined
  ) => Effect.Effect<void>
  readonly stats: (accountId: string) => Effect.Effect<BudgetStats>
}

/**
 * Per account, a mirror of the service's leaky bucket, restored over time with `Clock`. Answers are stamped
 * when they arrive (after the service measured the bucket), so the mirror never believes in more points than the
 * service has. It assumes one query in flight per account at a time, which is how the sync engine pages, but for a
 * page the Pager fetches ahead: that one it asks only while the mirror holds two pages' points (the mirror set from
 * an answer does not count the page still in flight), so the service always has the points of both.
 */
/** The query-cost bucket the service documents per app and account (points). */
export const DOCUMENTED_BUCKET_MAXIMUM = 10_000

export class CostBudget extends Context.Tag("account-sync/CostBudget")<CostBudget, CostBudgetShape>() {}

/**
 * What a learnt correction applies to: the operation with its inner page sizes (every numeric variable but the
 * outer page's `first` and the offsets). The service's cost is linear in `first`, not in the inner sizes, so a
 * ratio learnt with 20 line items per parent says nothing about 10.
 */
const positional = new Set(["first", "offset", "childOffset"])
const shapeOf = (document: DocumentNode, variables: Readonly<Record<string, unknown>>) => {
  let key = operationName(document)
  for (const name in variables) if (typeof variables[name] === "number" && !positional.has(name)) key += `|${name}=${variables[name]}`
  return key
}

const availableAt = (bucket: Bucket, now: number) =>
  Math.min(bucket.maximum, bucket.available + (bucket.restoreRate * (now - bucket.at)) / 1000)

export const makeCostBudget = Effect.gen(function* () {
  // a Ref per account: one account's page never copies the state of the others (a worker holds hundreds at once)
  const accounts = new Map<string, Ref.Ref<AccountState>>()
  const stateOf = (accountId: string) => {
    let ref = accounts.get(accountId)
    if (ref === undefined) accounts.set(accountId, (ref = Ref.unsafeMake(emptyState)))
    return ref
  }

  const read = (accountId: string) => Effect.suspend(() => Ref.get(stateOf(accountId)))
  const update = (accountId: string, f: (s: AccountState) => AccountState) => Effect.suspend(() => Ref.update(stateOf(accountId), f))

  const estimateWith = (s: AccountState, document: DocumentNode, variables: Readonly<Record<string, unknown>>) =>
    Math.ceil(staticQueryCost(document, variables) * (s.corrections.get(shapeOf(document, variables)) ?? 1))

  const estimate: CostBudgetShape["estimate"] = (accountId, document, variables) =>
    Effect.map(read(accountId), (s) => estimateWith(s, document, variables))

  const pageSize: CostBudgetShape["pageSize"] = (accountId, document, variablesFor, maxPageSize, fit = "full") =>
    Effect.map(Effect.zip(read(accountId), Clock.currentTimeMillis), ([s, now]) => {
      // before the account's first answer: the service's documented bucket (a larger one is learnt from that answer)
      const full = s.bucket?.maximum ?? DOCUMENTED_BUCKET_MAXIMUM
      const maximum = fit === "now" && s.bucket !== undefined ? Math.max(availableAt(s.bucket, now), full / 4) : full
      // cost grows with `first`: binary search for the largest page that fits a full bucket
      let lo = 1
      let hi = maxPageSize
      // the common answer first: the largest page fits (one estimate instead of the search's eight)
      if (estimateWith(s, document, variablesFor(hi)) <= maximum) return hi
      if (estimateWith(s, document, variablesFor(lo)) > maximum) return 1
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2)
        if (estimateWith(s, document, variablesFor(mid)) <= maximum) lo = mid
        else hi = mid - 1
      }
      return lo
    })

  /** The account's state after a wait until `until` (Clock ms) is counted: only what lies beyond a known wait. */
  const counted = (s: AccountState, now: number, until: number): AccountState => ({
    ...s,
    stats: { ...s.stats, waitedMs: s.stats.waitedMs + Math.max(0, until - Math.max(now, s.waitedUntil)) },
    waitedUntil: Math.max(s.waitedUntil, until)
  })

  const wait = (accountId: string, cost: number, waitMs: number) =>
    Effect.gen(function* () {
      if (waitMs <= 0) return
      yield* Metric.incrementBy(Metrics.forAccount(Metrics.throttleWaitSeconds, accountId), waitMs / 1000)
      yield* Effect.annotateLogs(Effect.logDebug(`waiting ${waitMs} ms for ${cost} query points`), { accountId })
      // a wait, not work: a worker hands the job's permit back meanwhile (idleWaiting)
      yield* idle(Effect.sleep(Duration.millis(waitMs)))
    })

  /** How long until the bucket holds `need` points more than `after` (its points at `now` less `need`) says. */
  const shortfallMs = (bucket: Bucket, after: number) => (after >= 0 ? 0 : Math.ceil((-after / bucket.restoreRate) * 1000))

  /** Waits until the bucket holds `cost` points; `reserve` takes them from it (acquire), else leaves them (room). */
  const waitForPoints = (accountId: string, cost: number, reserve: boolean) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const waitMs = yield* Ref.modify(stateOf(accountId), (s) => {
        const bucket = s.bucket
        if (bucket === undefined) return [0, s] as const
        const after = availableAt(bucket, now) - Math.min(cost, bucket.maximum)
        const ms = shortfallMs(bucket, after)
        const next = reserve ? { ...s, bucket: { ...bucket, available: after, at: now } } : s
        return [ms, counted(next, now, now + ms)] as const
      })
      yield* wait(accountId, cost, waitMs)
    })

  const acquire: CostBudgetShape["acquire"] = (accountId, cost) => waitForPoints(accountId, cost, true)
  const room: CostBudgetShape["room"] = (accountId, cost) => waitForPoints(accountId, cost, false)

  const mirror = (s: AccountState, cost: QueryCost, now: number): AccountState => ({
    ...s,
    bucket: {
      maximum: cost.throttleStatus.maximumAvailable,
      restoreRate: Math.max(cost.throttleStatus.restoreRate, 1e-6),
      available: cost.throttleStatus.currentlyAvailable,
      at: now
    }
  })

  const learn = (s: AccountState, document: DocumentNode, variables: Readonly<Record<string, unknown>>, cost: QueryCost) => {
    const staticCost = staticQueryCost(document, variables)
    if (!(staticCost > 0 && cost.requestedQueryCost > 0)) return s
    const corrections = new Map(s.corrections).set(shapeOf(document, variables), cost.requestedQueryCost / staticCost)
    return { ...s, corrections }
  }

  const observe: CostBudgetShape["observe"] = (accountId, document, variables, cost) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      update(accountId, (s) => {
        const next = mirror(learn(s, document, variables, cost), cost, now)
        return { ...next, stats: { ...next.stats, pointsUsed: next.stats.pointsUsed + cost.actualQueryCost } }
      })
    ).pipe(Effect.zipLeft(Metric.incrementBy(Metrics.forAccount(Metrics.queryCostPoints, accountId), cost.actualQueryCost)))

  const throttled: CostBudgetShape["throttled"] = (accountId, document, variables, cost) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      update(accountId, (s) => {
        const counted = { ...s, stats: { ...s.stats, throttled: s.stats.throttled + 1 } }
        return cost ? mirror(learn(counted, document, variables, cost), cost, now) : counted
      })
    ).pipe(Effect.zipLeft(Metric.increment(Metrics.forAccount(Metrics.throttledAnswers, accountId))))

  const stats: CostBudgetShape["stats"] = (accountId) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.map(read(accountId), (s) =>
        s.bucket === undefined ? s.stats : { ...s.stats, bucket: { restoreRate: s.bucket.restoreRate, available: availableAt(s.bucket, now) } }
      )
    )

  return CostBudget.of({ estimate, pageSize, acquire, room, observe, throttled, stats })
})

export const CostBudgetLive = Layer.effect(CostBudget, makeCostBudget)
