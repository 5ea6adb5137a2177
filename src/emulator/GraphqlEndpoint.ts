import { Either, Schema } from "effect"
import {
  buildSchema, execute, type GraphQLFieldResolver, GraphQLError, type GraphQLResolveInfo, type GraphQLSchema, parse,
  type DocumentNode, validate, type ExecutionResult
} from "graphql"
import * as fs from "node:fs"
import type { IncomingHttpHeaders } from "node:http"
import { jsonReply, type Reply } from "./Http.js"
import { compileFastPlan, fastArguments, fastResult, type FastPlan } from "./FastJobs.js"
import { JobsArgumentError, jobsConnection } from "./JobsResolver.js"
import { queryCost, selectOperation } from "./QueryCost.js"
import type { LimitsBook } from "./RateLimits.js"
import type { Account, App, Registry } from "./Registry.js"
import type { StatsCounter } from "./Stats.js"

/** `POST /api/graphql`: the vendored schema subset, executed with graphql-js, with auth, scopes, cost and limits. */

export const schemaPath = new URL("../../schema/service-subset.graphql", import.meta.url)

let cachedSchema: GraphQLSchema | undefined
export const serviceSchema = (): GraphQLSchema => (cachedSchema ??= buildSchema(fs.readFileSync(schemaPath, "utf8")))

export const VERSION_HEADER = "x-service-graphql-version"

/** Scope each root field needs; fields not listed need none. */
const scopeOf: Readonly<Record<string, string>> = {
  jobs: "read_jobs",
  clients: "read_clients",
  invoices: "read_invoices",
  quotes: "read_quotes",
  visits: "read_visits"
}

interface Context {
  readonly registry: Registry
  readonly app: App
  readonly account: Account
  readonly scopes: ReadonlySet<string>
  readonly maxPageSize: number
  /** Nodes returned per connection response path, for the actual cost. */
  readonly returned: Map<string, number>
}

const invalidToken = jsonReply(401, { errors: [{ message: "Invalid Token Error", extensions: { code: "UNAUTHENTICATED" } }] })

const RequestBody = Schema.Struct({
  query: Schema.String,
  variables: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown }))),
  operationName: Schema.optional(Schema.NullOr(Schema.String))
})
const decodeBody = Schema.decodeUnknownEither(Schema.parseJson(RequestBody))

const gqlError = (message: string, code: string, info?: GraphQLResolveInfo, extra: Record<string, unknown> = {}) =>
  new GraphQLError(message, { ...(info ? { nodes: info.fieldNodes } : {}), extensions: { code, ...extra } })

const requireScope = (ctx: Context, info: GraphQLResolveInfo): void => {
  const scope = scopeOf[info.fieldName]
  if (scope && !ctx.scopes.has(scope)) {
    throw gqlError(`Access denied: \`${info.fieldName}\` requires the ${scope} scope, which was not granted to this app`, "ACCESS_DENIED", info, { scope })
  }
}

const pathKey = (info: GraphQLResolveInfo): string => {
  const keys: Array<string> = []
  for (let p: GraphQLResolveInfo["path"] | undefined = info.path; p; p = p.prev) if (typeof p.key === "string") keys.unshift(p.key)
  return keys.join(".")
}

const resolveJobs: GraphQLFieldResolver<unknown, Context, Record<string, unknown>> = (_root, args, ctx, info) => {
  requireScope(ctx, info)
  try {
    const connection = jobsConnection(args, ctx.account.jobs, ctx.maxPageSize)
    ctx.returned.set(pathKey(info), connection.nodes.length)
    return connection
  } catch (e) {
    if (e instanceof JobsArgumentError) throw gqlError(e.message, e.code, info, e.extra)
    throw e
  }
}

const notServed: GraphQLFieldResolver<unknown, Context> = (_root, _args, ctx, info) => {
  requireScope(ctx, info)
  throw gqlError(`\`${info.fieldName}\` is not served by the emulator (only account, jobs and appDisconnect are)`, "FIELD_NOT_SUPPORTED", info)
}

const rootValue = {
  account: (_args: unknown, ctx: Context) => ({ id: ctx.account.accountId, name: ctx.account.name }),
  jobs: (args: Record<string, unknown>, ctx: Context, info: GraphQLResolveInfo) => resolveJobs(undefined, args, ctx, info),
  clients: (args: Record<string, unknown>, ctx: Context, info: GraphQLResolveInfo) => notServed(undefined, args, ctx, info),
  invoices: (args: Record<string, unknown>, ctx: Context, info: GraphQLResolveInfo) => notServed(undefined, args, ctx, info),
  quotes: (args: Record<string, unknown>, ctx: Context, info: GraphQLResolveInfo) => notServed(undefined, args, ctx, info),
  visits: (args: Record<string, unknown>, ctx: Context, info: GraphQLResolveInfo) => notServed(undefined, args, ctx, info),
  appDisconnect: (_args: unknown, ctx: Context) => {
    const app = { id: ctx.app.appId, name: ctx.app.name }
    const connection = ctx.registry.connection(ctx.app.appId, ctx.account.accountId)
    if (connection.status !== "connected") {
      return { app, userErrors: [{ message: `${ctx.app.name} is not connected to account ${ctx.account.name}`, path: ["appDisconnect"] }] }
    }
    ctx.registry.disconnectAll(ctx.app, ctx.account, "appDisconnect mutation")
    return { app, userErrors: [] }
  }
}

type Parsed =
  | { readonly _tag: "Ok"; readonly document: DocumentNode; readonly plans: Map<string, FastPlan | null> }
  | { readonly _tag: "ParseFailed"; readonly error: unknown }
  | { readonly _tag: "Invalid"; readonly errors: ReadonlyArray<unknown> }

// clients send the same few documents again and again: parse and validate each once
const documentCache = new Map<string, Parsed>()
const parseAndValidate = (schema: GraphQLSchema, query: string): Parsed => {
  const cached = documentCache.get(query)
  if (cached) return cached
  let result: Parsed
  try {
    const document = parse(query)
    const errors = validate(schema, document)
    result = errors.length > 0
      ? { _tag: "Invalid", errors: errors.map((e) => ({ ...e.toJSON(), extensions: { code: "GRAPHQL_VALIDATION_FAILED" } })) }
      : { _tag: "Ok", document, plans: new Map() }
  } catch (e) {
    const err = e instanceof GraphQLError ? e : new GraphQLError(String(e))
    result = { _tag: "ParseFailed", error: { ...err.toJSON(), extensions: { code: "GRAPHQL_PARSE_FAILED" } } }
  }
  if (documentCache.size >= 1000) documentCache.delete(documentCache.keys().next().value!)
  documentCache.set(query, result)
  return result
}

/** A valid date YYYY-MM-DD (absent is accepted). */
export const isValidVersion = (v: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v)
  if (!m) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3])
}

export interface GraphqlDeps {
  readonly registry: Registry
  readonly limits: LimitsBook
  readonly stats: StatsCounter
  /** false: always execute with graphql-js (the fast path's differential test compares the two). */
  readonly fastPath?: boolean
}

export const handleGraphql = async (deps: GraphqlDeps, headers: IncomingHttpHeaders, rawBody: string): Promise<Reply> => {
  const { registry, limits, stats } = deps
  stats.graphqlRequests++
  const auth = headers.authorization
  const token = typeof auth === "string" && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, "").trim() : undefined
  const verified = token ? registry.verifyAccess(token) : undefined
  if (!verified) return invalidToken
  const { app, account, claims } = verified
  const now = registry.clock.nowMs()

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
  const withCost = (body: Record<string, unknown>, requested: number, actual: number, status = 200) =>
    jsonReply(status, {
      ...body,
      extensions: { cost: { requestedQueryCost: requested, actualQueryCost: actual, throttleStatus: bucket.status(registry.clock.nowMs()) } }
    })

  const version = headers[VERSION_HEADER]
  if (typeof version === "string" && !isValidVersion(version)) {
    return withCost(
      { errors: [{ message: `X-SERVICE-GRAPHQL-VERSION: ${JSON.stringify(version)} is not a valid version; expected a date YYYY-MM-DD`, extensions: { code: "INVALID_VERSION_HEADER", header: "X-SERVICE-GRAPHQL-VERSION" } }] },
      0, 0, 400
    )
  }

  const body = decodeBody(rawBody)
  if (Either.isLeft(body)) {
    return withCost({ errors: [{ message: "request body must be a JSON object with a string `query` (and optional `variables`, `operationName`)", extensions: { code: "BAD_REQUEST" } }] }, 0, 0, 400)
  }
  const { query, variables, operationName } = body.right
  const schema = serviceSchema()
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
  const planKey = operationName ?? ""
  let plan = parsed.plans.get(planKey)
  if (plan === undefined) parsed.plans.set(planKey, (plan = compileFastPlan(schema, document, operation) ?? null))
  const maxPageSize = limits.limitsFor(app.appId, account.accountId).maxPageSize
  const scopes = new Set(claims.scope.split(" ").filter(Boolean))
  if (plan && deps.fastPath !== false && scopes.has("read_jobs")) {
    const args = fastArguments(schema, operation, plan, variables)
    let connection
    try {
      connection = args ? jobsConnection(args, account.jobs, maxPageSize) : undefined
    } catch (e) {
      if (!(e instanceof JobsArgumentError)) throw e
      // refused arguments: the graphql-js path below reports them as field errors
    }
    if (connection) {
      const actual = queryCost(costRequest, new Map([[plan.rootKey, connection.nodes.length]]))
      bucket.deduct(actual, registry.clock.nowMs())
      return withCost({ data: fastResult(plan, connection) }, requested, actual)
    }
  }

  const ctx: Context = {
    registry,
    app,
    account,
    scopes,
    maxPageSize,
    returned: new Map()
  }
  const result: ExecutionResult = await execute({
    schema, document, rootValue, contextValue: ctx, variableValues: variables ?? null, operationName: operationName ?? null
  })
  const actual = queryCost(costRequest, ctx.returned)
  bucket.deduct(actual, registry.clock.nowMs())
  return withCost(
    { ...(result.errors ? { errors: result.errors.map((e) => e.toJSON()) } : {}), data: result.data ?? null },
    requested,
    actual
  )
}
