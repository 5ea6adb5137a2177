/** The shared vocabulary of the sync engine: plain data, no behaviour. */

export type PassKind = "full" | "incremental"

/** Where a stream of an account stands (`sync_checkpoints`). */
export interface Checkpoint {
  /** The kind of the pass in progress; null when none is. */
  readonly passKind: PassKind | null
  /** endCursor of the last committed page of the pass in progress. */
  readonly cursor: string | null
  readonly passStartedAt: Date | null
  /** Newest updatedAt landed (service time), capped at the start of the pass that landed it. */
  readonly highWaterMark: Date | null
  /** When the last completed full pass started. */
  readonly lastFullPassAt: Date | null
}

/** One node as the service sent it: `node` checked against the stream's Schema (or decoded from `raw`). */
export interface ReceivedNode {
  readonly node: { readonly id: string } & Record<string, unknown>
  readonly raw: unknown
}

/** One page of a stream's connection, as received. */
export interface Page {
  /** The cursor the page was asked `after` (null: from the start). */
  readonly after: string | null
  readonly first: number
  readonly nodes: ReadonlyArray<ReceivedNode>
  readonly endCursor: string | null
  readonly hasNextPage: boolean
  /** The response body the nodes were read from (at `data`, the stream's connection path, `nodes`). */
  readonly body: string
}

export type Variables = Readonly<Record<string, unknown>>
