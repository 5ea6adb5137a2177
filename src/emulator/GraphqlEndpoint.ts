import { Either, Schema } from "effect"
import { type DocumentNode, GraphQLError, type GraphQLSchema, Kind, parse, validate } from "graphql"
import type { IncomingHttpHeaders } from "node:http"
import { type ApiVersions, dateMs, type ServedVersion } from "./ApiVersions.js"
import type { Account, App, AppsAndAccounts } from "./AppsAndAccounts.js"
import type { Grants } from "./Grants.js"
import { executeOperation, type RootResolver } from "./graphql/Executor.js"
import { jsonReply, type Reply } from "./Http.js"
import { queryCost, selectOperation } from "./QueryCost.js"
import type { PagingFaults } from "./PagingFaults.js"
import type { LimitsBook } from "./RateLimits.js"
import type { StatsCounter } from "./Stats.js"
import type { TokenInvalidation } from "./TokenInvalidation.js"
import type { VirtualClock } from "./VirtualClock.js"

/** `POST /api/graphql`: the vendored schema subset over each account's records, with auth, scopes, cost and limits. */

export { schemaPath, serviceSchema } from "./schema.js"

export const VERSION_HEADER = "x-service-graphql-version"

const invalidToken = jsonReply(401, { errors: [{ message: "Invalid Token Error", extensions: { code: "UNAUTHENTICATED" } }] })

const RequestBody = Schema.Struct({
  query: Schema.String,
  variables: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown }))),
  operationName: Schema.optional(Schema.NullOr(Schema.String))
})
const decodeBody = Schema.decodeUnknownEither(Schema.parseJson(RequestBody))

/** Root fields answered by the service itself rather than an account's collections. */
const rootResolvers = (deps: GraphqlDeps, app: App, account: Account): Record<string, RootResolver> => ({
  account: () => ({ id: account.accountId, name: account.name }),
  appDisconnect: () => {
    const appRef = { id: app.appId, name: app.name }
    const connection = deps.appsAndAccounts.connection(app.appId, account.accountId)
    if (connection.status !== "connected") {
      return { app: appRef, userErrors: [{ message: `${app.name} is not connected to account ${account.name}`, path: ["appDisconnect"] }] }
    }
    deps.invalidation.disconnectAll(app, account, "appDisconnect mutation")
    return { app: appRef, userErrors: [] }
  },
  ...(deps.subscriptions ? deps.subscriptions.resolvers(app, account) : {})
})

type Parsed =
  | { readonly _tag: "Ok"; readonly document: DocumentNode }
  | { readonly _tag: "ParseFailed"; readonly error: unknown }
  | { readonly _tag: "Invalid"; readonly errors: ReadonlyArray<unknown> }

// clients send the same few documents again and again: parse and validate each once per schema (API version)
const documentCaches = new WeakMap<GraphQLSchema, Map<string, Parsed>>()
const parseAndValidate = (schema: GraphQLSchema, query: string): Parsed => {
  let documentCache = documentCaches.get(schema)
  if (documentCache === undefined) documentCaches.set(schema, (documentCache = new Map()))
  const cached = documentCache.get(query)
  if (cached) return cached
  let result: Parsed
  try {
    const document = parse(query)
    const errors = validate(schema, document)
    result = errors.length > 0
      ? { _tag: "Invalid", errors: errors.map((e) => ({ ...e.toJSON(), extensions: { code: "GRAPHQL_VALIDATION_FAILED" } })) }
      : { _tag: "Ok", document }
  } catch (e) {
    const err = e instanceof GraphQLError ? e : new GraphQLError(String(e))
    result = { _tag: "ParseFailed", error: { ...err.toJSON(), extensions: { code: "GRAPHQL_PARSE_FAILED" } } }
  }
  if (documentCache.size >= 1000) documentCache.delete(documentCache.keys().next().value!)
  documentCache.set(query, result)
  return result
}

/** A valid date YYYY-MM-DD (absent is accepted). */
export const isValidVersion = (v: string): boolean => dateMs(v) !== undefined

export interface GraphqlDeps {
  readonly appsAndAccounts: AppsAndAccounts
  readonly grants: Grants
  readonly invalidation: TokenInvalidation
  readonly clock: VirtualClock
  readonly limits: LimitsBook
  readonly stats: StatsCounter
  /** The API versions served: the request header picks the schema that answers. */
  readonly versions: ApiVersions
  /** Webhook subscriptions of apps (the `webhookSubscription*` fields); absent: not served. */
  readonly subscriptions?: { readonly resolvers: (app: App, account: Account) => Record<string, RootResolver> }
  /** Nodes withheld from pages, `offset` ignored, per app and account (absent: neither). */
  readonly pagingFaults?: PagingFaults
  /** Runs before each admitted query of an account with its root fields (the churn that moves data under a pager). */
  readonly beforeQuery?: (account: Account, rootFields: ReadonlyArray<string>) => void
}

export const handleGraphql = async (deps: GraphqlDeps, headers: IncomingHttpHeaders, rawBody: string): Promise<Reply> => {
  const { grants, clock, limits, stats } = deps
  stats.graphqlRequests++
  const auth = headers.authorization
  const token = typeof auth === "string" && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, "").trim() : undefined
  const verified = token ? grants.verifyAccess(token) : undefined
  if (!verified) return invalidToken
  const { app, account, claims } = verified
  const now = clock.nowMs()

  const retryAfter = limits.guard(app.appId, account.accountId).admit(now)
  if (retryAfter !== undefined) {
    stats.rateLimited++
    return jsonReply(
      429,
      { errors: [{ message: `Too Many Requests: retry after ${retryAfter} s`, extensions: { code: "TOO_MANY_REQUESTS", retryAfterSeconds: retryAfter } }] },
      { "retry-after": String(retryAfter) }
    )
  }

  const bucket = limits.bucket(app.appId, account.accountId, now)
  /** The version answering, once the header is known to be valid: every answer from then on names it. */
  let served: ServedVersion | undefined
  const withCost = (body: Record<string, unknown>, requested: number, actual: number, status = 200) =>
    jsonReply(status, {
      ...body,
      extensions: {
        cost: { requestedQueryCost: requested, actualQueryCost: actual, throttleStatus: bucket.status(clock.nowMs()) },
        ...(served === undefined ? {} : { versioning: { version: served.version, ...(served.warning === undefined ? {} : { warning: served.warning }) } })
      }
    })

  const version = headers[VERSION_HEADER]
  if (typeof version === "string" && !isValidVersion(version)) {
    return withCost(
      { errors: [{ message: `X-SERVICE-GRAPHQL-VERSION: ${JSON.stringify(version)} is not a valid version; expected a date YYYY-MM-DD`, extensions: { code: "INVALID_VERSION_HEADER", header: "X-SERVICE-GRAPHQL-VERSION" } }] },
      0, 0, 400
    )
  }
  served = deps.versions.resolve(typeof version === "string" ? version : undefined)

  const body = decodeBody(rawBody)
  if (Either.isLeft(body)) {
    return withCost({ errors: [{ message: "request body must be a JSON object with a string `query` (and optional `variables`, `operationName`)", extensions: { code: "BAD_REQUEST" } }] }, 0, 0, 400)
  }
  const { query, variables, operationName } = body.right
  const schema = served.schema
  const parsed = parseAndValidate(schema, query)
  if (parsed._tag === "ParseFailed") return withCost({ errors: [parsed.error] }, 0, 0)
  if (parsed._tag === "Invalid") return withCost({ errors: parsed.errors }, 0, 0)
  const document = parsed.document
  if (!selectOperation(document, operationName)) {
    return withCost({ errors: [{ message: operationName ? `unknown operation ${operationName}` : "operationName is required when the document has several operations", extensions: { code: "BAD_REQUEST" } }] }, 0, 0)
  }

  const costRequest = { schema, document, operationName, variables }
  const requested = queryCost(costRequest)
  if (!bucket.admits(requested, now)) {
    stats.throttled++
    return withCost({ errors: [{ message: "Throttled", extensions: { code: "THROTTLED" } }] }, requested, 0)
  }

  const operation = selectOperation(document, operationName)!
  deps.beforeQuery?.(account, operation.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [s.name.value] : [])))
  const result = executeOperation({
    schema,
    document,
    operation,
    variables,
    world: account.world,
    maxPageSize: limits.limitsFor(app.appId, account.accountId).maxPageSize,
    roots: rootResolvers(deps, app, account),
    scopeOf: (field) => account.world.scopeOf(field),
    scopes: new Set(claims.scope.split(" ").filter(Boolean)),
    ...(deps.pagingFaults ? { paging: deps.pagingFaults.for(app.appId, account.accountId) } : {})
  })
  const actual = Math.min(requested, result.cost)
  bucket.deduct(actual, clock.nowMs())
  stats.costPointsByAccount[account.accountId] = (stats.costPointsByAccount[account.accountId] ?? 0) + actual
  return withCost({ ...(result.errors ? { errors: result.errors } : {}), ...("data" in result ? { data: result.data ?? null } : {}) }, requested, actual)
}
