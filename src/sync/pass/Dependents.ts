import type { SqlError } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import type { AccountCredentials } from "../../api/ServiceClient.js"
import { Checkpoints } from "./Checkpoints.js"
import type { AccountLockLost } from "../errors.js"
import { Pager, type PagerError } from "../paging/Pager.js"
import { pointsOfRead, type Refetched } from "./Refetch.js"
import { refetchReader } from "./refetchReader.js"
import type { AnyStream } from "../streams/Stream.js"
import { SyncSettings } from "../SyncSettings.js"
import { Warehouse } from "../landing/Warehouse.js"
import { runSpan } from "../../observability/spans.js"

/**
 * Rows of one stream that hold data of another's records, which the service does not announce when those records
 * change (a visit's line items are its job's, and no visit event comes when they change): each stream says what it
 * depends on (`dependsOn` in its definition); when records of a stream change (a change event, a destroy included, or
 * an incremental pass), the stored rows of its dependents that link to them are read again their own way (`refetch`)
 * and landed: their children are replaced like any page's, a row the read proves gone is marked deleted, and a row the
 * stream cannot read again asks for its next full pass. Nothing here knows a stream by name.
 */

/** One step: the stored rows of `stream` whose `column` links them to changed records of the stream `on`. */
export interface DependencyStep {
  readonly stream: AnyStream
  readonly column: string
  readonly on: string
}

/**
 * The steps that follow a change of `changed`'s records, breadth first: its dependents in `catalog`, then theirs (their
 * rows read again are changed records too). Each dependency is followed once, so a cycle ends.
 */
export const dependencyPlan = (changed: AnyStream, catalog: ReadonlyArray<AnyStream>): ReadonlyArray<DependencyStep> => {
  const steps: Array<DependencyStep> = []
  const followed = new Set<string>()
  let frontier: ReadonlyArray<string> = [changed.name]
  while (frontier.length > 0) {
    const next: Array<string> = []
    for (const on of frontier) {
      for (const stream of catalog) {
        for (const d of stream.dependsOn) {
          const key = JSON.stringify([stream.name, d.column, on])
          if (d.stream !== on || followed.has(key)) continue
          followed.add(key)
          steps.push({ stream, column: d.column, on })
          next.push(stream.name)
        }
      }
    }
    frontier = next
  }
  return steps
}

/** What one step read: the dependent rows as the service has them now. */
export interface DependentRead extends Refetched {
  readonly stream: AnyStream
}

/** The points the service charged for the reads. */
export const pointsOf = (reads: ReadonlyArray<DependentRead>): number => reads.reduce((p, r) => p + pointsOfRead(r), 0)

export class Dependents extends Context.Tag("account-sync/Dependents")<
  Dependents,
  {
    /**
     * The stored rows of every stream depending on `changed` that link to `ids` (changed or destroyed records), read
     * again; nothing landed yet. `occurredAt`: when the records changed (what a refetch by update time starts from).
     * `asRead` (a pass's reads: id to updatedAt): of those records, only the ones the warehouse does not hold as read
     * are followed (see Warehouse.idsLinkedToChanged); a change event's are followed whatever their updatedAt.
     */
    readonly read: <E>(
      credentials: AccountCredentials<E>,
      changed: AnyStream,
      ids: ReadonlyArray<string>,
      occurredAt: Date,
      asRead?: ReadonlyMap<string, string>
    ) => Effect.Effect<ReadonlyArray<DependentRead>, PagerError | SqlError.SqlError | E>
    /**
     * The reads landed (in the caller's transaction, when it has one): rows and their children as read, those proven
     * gone marked deleted as of `at`, a full pass asked for a stream whose rows could not be read again.
     */
    readonly land: (
      accountId: string,
      reads: ReadonlyArray<DependentRead>,
      at: Date
    ) => Effect.Effect<{ readonly landed: number; readonly deleted: number }, SqlError.SqlError | AccountLockLost>
  }
>() {}

export const DependentsLive = Layer.effect(
  Dependents,
  Effect.gen(function* () {
    const warehouse = yield* Warehouse
    const checkpoints = yield* Checkpoints
    const readerOf = refetchReader(yield* Pager, warehouse)
    const catalog = (yield* SyncSettings).streams.catalog

    const read = <E>(credentials: AccountCredentials<E>, changed: AnyStream, ids: ReadonlyArray<string>, occurredAt: Date, asRead?: ReadonlyMap<string, string>) =>
      Effect.gen(function* () {
        const reads: Array<DependentRead> = []
        const changedIds = new Map<string, ReadonlyArray<string>>([[changed.name, ids]])
        // an id read without an updatedAt is followed whatever the warehouse holds
        const readAt = asRead === undefined ? undefined : new Map(ids.map((id) => [id, asRead.get(id) ?? null] as const))
        for (const step of dependencyPlan(changed, catalog)) {
          const linked =
            step.on === changed.name && readAt !== undefined
              ? yield* warehouse.idsLinkedToChanged(credentials.accountId, step.stream, step.column, changed, readAt)
              : yield* warehouse.idsLinkedTo(credentials.accountId, step.stream, step.column, changedIds.get(step.on) ?? [])
          if (linked.length === 0) continue
          const refetched =
            step.stream.refetch === undefined
              ? { pages: [], gone: [], unreachable: linked, countPoints: 0 }
              : yield* step.stream.refetch.read(
                  linked.map((id) => ({ id, occurredAt })),
                  readerOf(credentials, step.stream)
                )
          reads.push({ stream: step.stream, ...refetched })
          changedIds.set(step.stream.name, [...new Set([...(changedIds.get(step.stream.name) ?? []), ...linked])])
          yield* Effect.logDebug(`${linked.length} ${step.stream.name} row(s) linked to changed ${step.on} read again`)
        }
        return reads
      }).pipe(runSpan("sync.dependents", { accountId: credentials.accountId, stream: changed.name, ids: ids.length }))

    const land = (accountId: string, reads: ReadonlyArray<DependentRead>, at: Date) =>
      Effect.gen(function* () {
        let landed = 0
        let deleted = 0
        for (const r of reads) {
          const nodes = r.pages.flatMap((p) => p.nodes)
          if (nodes.length > 0) {
            const fetchedAt = new Date(Math.min(...r.pages.map((p) => p.fetchedAtMs)))
            yield* warehouse.land({ accountId, stream: r.stream, pages: r.pages, pass: undefined, recordSeen: true, fetchedAt })
            landed += new Set(nodes.map((n) => n.node.id)).size
          }
          if (r.gone.length > 0) deleted += (yield* warehouse.markDeleted(accountId, r.stream, r.gone, at)).length
          if (r.unreachable.length > 0) yield* checkpoints.requestFullPass(accountId, r.stream.name)
        }
        return { landed, deleted }
      })

    return Dependents.of({ read, land })
  })
)
