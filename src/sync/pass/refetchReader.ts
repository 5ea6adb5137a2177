import type { SqlError } from "@effect/sql"
import { Chunk, type Context, Effect, Stream } from "effect"
import type { AccountCredentials } from "../../api/ServiceClient.js"
import type { Pager, PagerError } from "../paging/Pager.js"
import type { RefetchReader } from "./Refetch.js"
import type { AnyStream } from "../streams/Stream.js"
import type { Warehouse } from "../landing/Warehouse.js"

/**
 * The reader of one stream of one account: its pages through the pager, its stored rows through the warehouse. It
 * lives beside its users (the consumer, Dependents), not in Refetch.ts, so a stream's definition does not depend on
 * the Pager and the Warehouse.
 */
export const refetchReader =
  (pager: Context.Tag.Service<typeof Pager>, warehouse: Context.Tag.Service<typeof Warehouse>) =>
  <E>(credentials: AccountCredentials<E>, stream: AnyStream): RefetchReader<PagerError | SqlError.SqlError | E> => ({
    pages: (variables, atMost) =>
      Effect.map(Stream.runCollect(pager.pages({ credentials, stream, variables, ...(atMost === undefined ? {} : { atMost }) })), Chunk.toReadonlyArray),
    count: (variables) => pager.count(credentials, stream, variables),
    stored: (ids, column) => warehouse.storedColumn(credentials.accountId, stream, ids, column)
  })
