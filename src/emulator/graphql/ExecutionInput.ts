import type { DocumentNode, GraphQLSchema, OperationDefinitionNode } from "graphql"
import type { World } from "../data/World.js"
import type { PagingView } from "../PagingFaults.js"

/** What the executor runs an operation with, and what it answers. */

export type RootResolver = (args: Record<string, unknown>) => unknown

export interface ExecutionInput {
  readonly schema: GraphQLSchema
  readonly document: DocumentNode
  readonly operation: OperationDefinitionNode
  readonly variables: Record<string, unknown> | null | undefined
  readonly world: World
  readonly maxPageSize: number
  /** Root fields that are not collections (account, mutations, webhook subscriptions). */
  readonly roots: Readonly<Record<string, RootResolver>>
  /** The scope a root field needs (absent: none); a missing one answers ACCESS_DENIED at the field. */
  readonly scopeOf: (rootField: string) => string | undefined
  readonly scopes: ReadonlySet<string>
  /** Nodes withheld from pages after paging, `offset` ignored (PagingFaults); absent: neither. */
  readonly paging?: PagingView
}

export interface ExecutionOutput {
  readonly data?: Record<string, unknown> | null
  readonly errors?: ReadonlyArray<Record<string, unknown>>
  readonly cost: number
}
