import type { DocumentNode } from "graphql"
import type { Schema } from "effect"

/** Postgres types a mapped column can have; the Warehouse takes each column out of the page JSON as that type. */
export type ColumnType = "text" | "integer" | "double precision" | "boolean" | "timestamptz"

export interface Column {
  /** Field of the node (camelCase, as the service names it). */
  readonly field: string
  /** Column of the stream's table (snake_case). */
  readonly column: string
  readonly type: ColumnType
}

/** How a stream finds what changed since its last pass. */
export type IncrementalStrategy =
  /**
   * The connection sorts newest-updated first but cannot filter by update time (jobs): page from the top and stop
   * at the first page whose rows are all older than the high-water mark minus the overlap.
   * What it cannot see, repaired by the next full pass (SYNC_FULL_PASS_EVERY, default daily): deletions; and a row
   * whose updatedAt is older than high-water mark minus overlap when it becomes visible (service clock skew or
   * backdated updates beyond the overlap). A row edited while the pass pages moves to the top, behind the pass, and
   * is picked up by the next incremental pass (its updatedAt is newer than the mark).
   */
  | { readonly _tag: "NewestFirst"; readonly variables: Readonly<Record<string, unknown>> }
  /** No incremental access: every pass is a full pass. */
  | { readonly _tag: "None" }

/**
 * A stream is a value: adding one is a new definition plus a migration for its table; Pager, Warehouse and
 * SyncRunner do not change. The table has (account_id, id) as key, the mapped columns, `raw jsonb`,
 * `first_seen_at`, `synced_at` and `deleted_at`.
 */
export interface StreamDefinition<Node extends { readonly id: string } = { readonly id: string }> {
  readonly name: string
  readonly table: string
  /** A query with `$first: Int!` and `$after: String` over one connection selecting `nodes` and `pageInfo`. */
  readonly document: DocumentNode
  /** Where the connection is in `data`, e.g. ["jobs"]. */
  readonly connectionPath: ReadonlyArray<string>
  /** One node, decoded from the JSON the service sent. */
  readonly node: Schema.Schema<Node, any>
  readonly columns: ReadonlyArray<Column>
  readonly maxPageSize: number
  /** Variables of a full pass: an order that does not move when rows change (new rows may append). */
  readonly fullPassVariables: Readonly<Record<string, unknown>>
  readonly incremental: IncrementalStrategy
  /** The node's last-update time (ISO 8601, service time): feeds the high-water mark. */
  readonly updatedAt: (node: Node) => string
}

export type AnyStream = StreamDefinition<any>

const snake = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** A column named after its field. */
export const column = (field: string, type: ColumnType): Column => ({ field, column: snake(field), type })
