/**
 * A record type as data: its node type in the schema (every field not named here is drawn from its type), the
 * fields it writes itself, its links to other collections, its line items and custom fields, its sort keys and
 * filters. One generic collection serves every type defined this way (World.ts); the definitions are in definitions.ts.
 */

/** What a record type's own fields are computed from. */
export interface RecordInput {
  readonly seed: number
  readonly index: number
  readonly createdMs: number
  readonly updatedMs: number
  readonly idNumber: number
  readonly webBase: string
}

/** A link to another collection: the index of the linked record (null: none). */
export interface LinkRule {
  readonly to: string
  readonly pick: (input: RecordInput, sizeOf: (collection: string) => number, linkOf: (collection: string, field: string, index: number) => number | null) => number | null
}

/** A filter field the collection understands. */
export type FilterRule =
  | { readonly kind: "ids" }
  /** The record's link field names this id (`clientId` -> `client`). */
  | { readonly kind: "link"; readonly field: string }
  /** An `Iso8601DateTimeRangeInput` on a time field of the record (`after` and `before` exclusive, `eq` to the second). */
  | { readonly kind: "time"; readonly field: string }
  /** The record's field equals the value. */
  | { readonly kind: "equals"; readonly field: string }

export interface ChildrenDefinition {
  /** The connection field on the node, e.g. `lineItems`. */
  readonly field: string
  readonly nodeType: string
  /** The children are those of the record this link names (a visit's line items are its job's). */
  readonly of?: { readonly link: string; readonly collection: string }
}

export interface RecordDefinition {
  /** The root field that lists the collection, and its name. */
  readonly name: string
  readonly nodeType: string
  /** The OAuth scope a token needs to read the collection (and its aliases); an app asks for every collection's by default. */
  readonly scope: string
  /** Records per account for an account of `jobs` jobs. */
  readonly size: (jobs: number, seed: number) => number
  /** Fields written by the type itself (realistic or consistent values), over the schema-drawn ones. */
  readonly fields?: (input: RecordInput) => Record<string, unknown>
  /** What an edit changes (default: a text field and an enum field, drawn again). */
  readonly edit?: (input: RecordInput, editSeed: number) => Record<string, unknown>
  readonly links?: Readonly<Record<string, LinkRule>>
  /** Sort keys of the schema's sort enum, each the record field it orders by. */
  readonly sortKeys?: Readonly<Record<string, string>>
  /** Where the sort argument is (default `sort`; products: `filter.sort`). */
  readonly sortIn?: "sort" | "filter.sort"
  readonly filters?: Readonly<Record<string, FilterRule>>
  readonly children?: ChildrenDefinition
  /** Fields holding the record's custom fields (`customFields`, and Invoice's deprecated `customFieldValues`). */
  readonly customFields?: ReadonlyArray<string>
  /** Root arguments accepted besides filter, sort and pagination: how each narrows the list (absent: accepted, no effect). */
  readonly arguments?: Readonly<Record<string, ((value: unknown) => (record: Record<string, unknown>) => boolean) | undefined>>
}
