import { Effect, ParseResult, Schema } from "effect"
import type { AccountCredentials, ServiceClient } from "../../api/ServiceClient.js"
import { ConnectionShapeInvalid } from "../errors.js"
import type { Variables } from "../model.js"
import { at } from "./pageNodes.js"
import type { AnyStream } from "../streams/Stream.js"

const CountSchema = Schema.Struct({ totalCount: Schema.Number })

/**
 * How many rows one partition of the stream's connection holds in `variables` (the pass's merged with the partition's;
 * the order is left out: a count has none), and what the count cost.
 */
export const listCount = <E>(client: ServiceClient["Type"], credentials: AccountCredentials<E>, stream: AnyStream, variables: Variables) =>
  Effect.gen(function* () {
    const { sort: _, ...rest } = variables as Record<string, unknown>
    const result = yield* client.execute(credentials, stream.countDocument, rest)
    const decoded = Schema.decodeUnknownEither(CountSchema)(at(result.data, stream.connectionPath))
    if (decoded._tag === "Left") {
      return yield* new ConnectionShapeInvalid({
        accountId: credentials.accountId,
        stream: stream.name,
        position: null,
        detail: `totalCount: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`
      })
    }
    return { total: decoded.right.totalCount, costPoints: result.cost?.actualQueryCost ?? 0 }
  })
