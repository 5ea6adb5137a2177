import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { type DocumentNode, Kind, print } from "graphql"
import { Context, Duration, Effect, Layer, ParseResult, Random, Redacted, Schedule, Stream } from "effect"
import { ApiVersionWatch, ApiVersionWatchLive } from "./ApiVersionWatch.js"
import { decodeEnvelope } from "./envelope.js"
import { parseJsonBytes } from "./jsonBytes.js"
import { ServiceEndpoint } from "./ServiceEndpoint.js"
import { operationName } from "./documents.js"
import {
  GraphqlTokenInvalid,
  MutationUserErrors,
  PermissionDenied,
  QueryFailed,
  type QueryCost,
  RateLimited,
  ResponseTooLarge,
  type ServiceError,
  Throttled,
  TransientFailure,
  UnexpectedResponse
} from "./errors.js"

// One GraphQL POST with a given token, and nothing else: no token lookup, no cost budget. It needs only the
// ServiceEndpoint and an HttpClient, so the auth layers (identity query, appDisconnect) can use it too.

export interface GraphqlResult {
  readonly data: unknown
  readonly cost: QueryCost | undefined
  /** The response body's bytes as received, `data` included: a sync lands a page's nodes from them. */
  readonly body: Uint8Array
}

export type Variables = Readonly<Record<string, unknown>>

export interface GraphqlTransportShape {
  /** One query with a given token: transient failures retried (bounded, jittered), 429 honoured, nothing else. */
  readonly executeWithToken: (
    token: Redacted.Redacted<string>,
    document: DocumentNode,
    variables?: Variables
  ) => Effect.Effect<GraphqlResult, ServiceError>
}

export class GraphqlTransport extends Context.Tag("account-sync/GraphqlTransport")<GraphqlTransport, GraphqlTransportShape>() {}

/**
 * Transient failures: 9 attempts at most, exponential from 200 ms up to 2 s, jittered. Enough that a service failing
 * one answer in seven (the resilience test) does not fail a pass by chance.
 */
export const transientRetry = Schedule.exponential("200 millis").pipe(
  Schedule.union(Schedule.spaced("2 seconds")),
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(8))
)

/** HTTP 429: wait what `Retry-After` says plus up to 250 ms of jitter, 5 times at most. */
export const rateLimitRetry = Schedule.identity<ServiceError>().pipe(
  Schedule.addDelayEffect((e) =>
    Effect.map(Random.nextIntBetween(0, 250), (jitter) =>
      Duration.sum(e._tag === "RateLimited" ? e.retryAfter : Duration.zero, Duration.millis(jitter))
    )
  ),
  Schedule.intersect(Schedule.recurs(5))
)

const retryAfterOf = (header: string | undefined): Duration.Duration => {
  const seconds = header === undefined ? NaN : Number(header)
  return Number.isFinite(seconds) && seconds >= 0 ? Duration.seconds(seconds) : Duration.seconds(1)
}

/** An HTTP client failure in one line: its kind, reason and the socket's error code (ECONNRESET...) when there is one. */
const describeHttpError = (e: HttpClientError.HttpClientError): string => {
  const cause = e.cause instanceof Error ? ((e.cause as NodeJS.ErrnoException).code ?? e.cause.message) : undefined
  return [e._tag, e.reason, cause].filter(Boolean).join(": ")
}

/** Whether the document's (first) operation is a mutation: its answer stands even from a replaced API version. */
const kindOf = (document: DocumentNode): "query" | "mutation" => {
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)
  return operation?.kind === Kind.OPERATION_DEFINITION && operation.operation === "mutation" ? "mutation" : "query"
}

/** A document's query text, printed once: every page of a stream sends the same document. */
const printed = new WeakMap<DocumentNode, string>()
const queryText = (document: DocumentNode) => {
  let text = printed.get(document)
  if (text === undefined) printed.set(document, (text = print(document)))
  return text
}

/**
 * The body's bytes, read only up to `limit`: a larger one (by its Content-Length, or as it arrives) fails "too large"
 * without being held in memory.
 */
const bodyUpTo = (response: HttpClientResponse.HttpClientResponse, limit: number): Effect.Effect<Buffer, HttpClientError.ResponseError | "too large"> => {
  const declared = Number(response.headers["content-length"])
  if (Number.isFinite(declared) && declared > limit) return Effect.fail("too large" as const)
  // a declared length within the limit bounds the body (the HTTP client reads no further): one read, not a stream
  if (Number.isFinite(declared)) return Effect.map(response.arrayBuffer, (body) => Buffer.from(body))
  return response.stream.pipe(
    Stream.runFoldEffect({ chunks: [] as Array<Uint8Array>, size: 0 }, (read, chunk) => {
      const size = read.size + chunk.length
      if (size > limit) return Effect.fail("too large" as const)
      read.chunks.push(chunk)
      return Effect.succeed({ chunks: read.chunks, size })
    }),
    Effect.map(({ chunks, size }) => Buffer.concat(chunks, size))
  )
}

export const makeGraphqlTransport = Effect.gen(function* () {
  const settings = yield* ServiceEndpoint
  const http = yield* HttpClient.HttpClient
  const versions = yield* ApiVersionWatch
  const endpoint = `${settings.baseUrl}/api/graphql`
  const timeout = settings.requestTimeout

  const once = (token: Redacted.Redacted<string>, document: DocumentNode, variables: Variables) => {
    const operation = operationName(document)
    const transient = (reason: string) => new TransientFailure({ operation, reason })
    const request = HttpClientRequest.post(endpoint).pipe(
      HttpClientRequest.bearerToken(Redacted.value(token)),
      HttpClientRequest.setHeaders({ "X-SERVICE-GRAPHQL-VERSION": settings.graphqlVersion, Accept: "application/json" }),
      HttpClientRequest.bodyUnsafeJson({ query: queryText(document), operationName: operation, variables })
    )
    return Effect.gen(function* () {
      const response = yield* http.execute(request).pipe(Effect.mapError((e) => transient(describeHttpError(e))))
      if (response.status === 401) return yield* new GraphqlTokenInvalid({ operation })
      if (response.status === 429) {
        return yield* new RateLimited({ operation, retryAfter: retryAfterOf(response.headers["retry-after"]) })
      }
      if (response.status >= 500) return yield* transient(`HTTP ${response.status}`)
      const bytes = yield* bodyUpTo(response, settings.maxResponseBytes).pipe(
        Effect.mapError((e) =>
          e === "too large" ? new ResponseTooLarge({ operation, limit: settings.maxResponseBytes }) : transient(`reading the body: ${describeHttpError(e)}`)
        )
      )
      const json = yield* Effect.try({
        try: () => parseJsonBytes(bytes),
        catch: () => transient(`HTTP ${response.status} with a body that is not JSON (${bytes.length} bytes; truncated?)`)
      })
      const envelope = decodeEnvelope(json)
      if (envelope._tag === "Left") {
        return yield* new UnexpectedResponse({
          operation,
          detail: `HTTP ${response.status}: ${ParseResult.TreeFormatter.formatErrorSync(envelope.left)}`
        })
      }
      const { data, errors, extensions } = envelope.right
      yield* versions.observe(operation, kindOf(document), extensions?.versioning)
      const cost = extensions?.cost
        ? { ...extensions.cost, actualQueryCost: extensions.cost.actualQueryCost ?? 0 }
        : undefined
      if (errors && errors.length > 0) {
        const codes = errors.map((e) => e.extensions?.code)
        const detail = errors.map((e) => e.message).join("; ")
        if (codes.includes("THROTTLED")) return yield* new Throttled({ operation, cost })
        if (codes.includes("ACCESS_DENIED")) return yield* new PermissionDenied({ operation, detail })
        return yield* new QueryFailed({ operation, code: codes.find((c) => c !== undefined), detail })
      }
      if (response.status !== 200) return yield* new QueryFailed({ operation, code: undefined, detail: `HTTP ${response.status}` })
      if (data === undefined || data === null) return yield* new UnexpectedResponse({ operation, detail: "no data and no errors" })
      return { data, cost, body: bytes } satisfies GraphqlResult
    }).pipe(
      Effect.scoped,
      Effect.timeoutFail({ duration: timeout, onTimeout: () => transient(`no answer within ${Duration.format(timeout)}`) })
    )
  }

  const executeWithToken: GraphqlTransportShape["executeWithToken"] = (token, document, variables = {}) =>
    once(token, document, variables).pipe(
      Effect.retry({ schedule: transientRetry, while: (e) => e._tag === "TransientFailure" }),
      Effect.retry({ schedule: rateLimitRetry, while: (e) => e._tag === "RateLimited" })
    )

  return GraphqlTransport.of({ executeWithToken })
})

/** Needs the ServiceEndpoint, an HttpClient and the database (what answered our API version is recorded there). */
export const GraphqlTransportLive = Layer.effect(GraphqlTransport, makeGraphqlTransport).pipe(Layer.provide(ApiVersionWatchLive))

/** Fails with the mutation's `userErrors` messages when there are any. */
export const failOnUserErrors = (
  operation: string,
  payload: { readonly userErrors?: ReadonlyArray<{ readonly message: string }> | null }
): Effect.Effect<void, MutationUserErrors> =>
  payload.userErrors && payload.userErrors.length > 0
    ? Effect.fail(new MutationUserErrors({ operation, messages: payload.userErrors.map((e) => e.message) }))
    : Effect.void
