/** The shared vocabulary of the sync engine: plain data, no behaviour. */

export type PassKind = "full" | "incremental"

/** Where a batch's pass stands once it lands: what the page statement moves the checkpoint to. */
export interface PassProgress {
  readonly kind: PassKind
  /** The partition of the stream's list, the rows of it landed, and the ids of the last page (the next joins on them). */
  readonly partition: number
  readonly position: number
  readonly anchors: ReadonlyArray<string>
  /** A page of the batch did not join where it would have, had nothing moved. */
  readonly shifted: boolean
  /** The batch's high-water mark (PassState.batchHighWater), service time; capped by `passMark`. */
  readonly highWaterMark: string | null
  /** The batch ends its incremental pass: the page statement ends it (`finishIncremental`'s writes), in one round trip. */
  readonly endsIncremental?: boolean
}

/** Where a stream of an account stands (its checkpoint, see Checkpoints). */
export interface Checkpoint {
  /** The kind of the pass in progress; null when none is. */
  readonly passKind: PassKind | null
  /** The partition of the stream's list the pass in progress is in, and the rows of it landed so far. */
  readonly partition: number
  readonly position: number
  /** The ids of its last landed page, in order: the rows its next page joins on. */
  readonly anchors: ReadonlyArray<string>
  /** The list moved under the pass in progress (a page did not start where the last one ended). */
  readonly shifted: boolean
  /** The full pass in progress records the ids it sees (false: the account had no live rows when it began). */
  readonly tracksSeen: boolean
  readonly passStartedAt: Date | null
  /** Newest updatedAt landed (service time), capped at the start of the pass that landed it. */
  readonly highWaterMark: Date | null
  /** When the last completed full pass started. */
  readonly lastFullPassAt: Date | null
  /** A change event asked for a full pass (a record it could not read otherwise) at this time. */
  readonly fullPassRequestedAt: Date | null
  /** When the last completed incremental pass started. */
  readonly lastIncrementalPassAt: Date | null
}

/** One node as the service sent it: `node` checked against the stream's Schema (or decoded from `raw`). */
export interface ReceivedNode {
  readonly node: { readonly id: string } & Record<string, unknown>
  readonly raw: unknown
}

/** One page of a stream's connection as received, joined on the rows the pass had landed (see Continuation). */
export interface Page {
  /** The partition of the stream's list the page is of (most streams have one list: 0). */
  readonly partition: number
  /** The position the page was asked from (paging after cursors: the positions paged before it), and its size. */
  readonly offset: number
  readonly first: number
  /** Every node of the page, in order (fewer than `first` when the service left some out, or the list ended). */
  readonly nodes: ReadonlyArray<ReceivedNode>
  /** Index of the first node the pass had not landed before (the ones before were read again to join). */
  readonly newFrom: number
  /** Positions of the partition's order paged once this page is (where the next page starts, less the overlap). */
  readonly position: number
  /** Another page of the pass follows: the service's `hasNextPage`, or another partition comes. */
  readonly mayHaveMore: boolean
  /** The response body the nodes were read from (at `data`, the stream's connection path, `nodes`), when they are as received. */
  readonly body: Uint8Array | undefined
  /** The page did not join where it would have, had nothing moved (or could not be checked). */
  readonly shifted: boolean
  /** The page joined the rows landed (or began the list): no row between it and the page before can have been skipped. */
  readonly checked: boolean
  /** Points the service charged for the page. */
  readonly costPoints: number
  /** When the page was asked for (a row marked deleted after that is not brought back by it). */
  readonly fetchedAtMs: number
  /** Of those and of pages thrown away to find the join: points spent on rows the pass had already read. */
  readonly overheadPoints: number
}

export type Variables = Readonly<Record<string, unknown>>

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v)

/** `extra` over `base`, objects merged field by field (a lookup's `filter: {userIds}` and a partition's `filter: {status}`). */
export const mergeVariables = (base: Variables, extra: Variables): Variables => {
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(extra)) {
    const under = out[key]
    out[key] = isPlainObject(under) && isPlainObject(value) ? mergeVariables(under, value) : value
  }
  return out
}
