import { buildSchema, type GraphQLSchema, validateSchema } from "graphql"
import { AdminRejected } from "./errors.js"
import { serviceSchema } from "./schema.js"
import type { VirtualClock } from "./VirtualClock.js"

/**
 * The API versions the emulator serves, as the service does: each a date with its schema and, once announced, its
 * removal date. The request header `X-SERVICE-GRAPHQL-VERSION` picks one; a version within `warnDays` of its removal
 * answers with `extensions.versioning.warning`; a removed or unknown version (or none) is answered by the oldest
 * supported one, named only in `extensions.versioning.version`. Removal follows the emulator's clock.
 */

/** The version served when nothing else is set (the connector's default SERVICE_GRAPHQL_VERSION). */
export const DEFAULT_API_VERSION = "2025-01-20"

/** Days before its removal from which a version's answers carry a warning (by default). */
export const DEFAULT_WARN_DAYS = 90

export interface ApiVersionSpec {
  /** `YYYY-MM-DD`. */
  readonly version: string
  /** Its schema as SDL; default the vendored subset (`schema/service-subset.graphql`). */
  readonly schema?: string
  /** `YYYY-MM-DD`: from this day (UTC, on the emulator clock) the version is no longer served. */
  readonly removedAt?: string
}

export interface ApiVersionStatus {
  readonly version: string
  readonly removedAt?: string
  /** supported; deprecated: supported, with a warning (within warnDays of removal); removed. */
  readonly status: "supported" | "deprecated" | "removed"
}

/** What answers a request: the version, its schema, and the warning its answers carry. */
export interface ServedVersion {
  readonly version: string
  readonly schema: GraphQLSchema
  readonly warning?: string
}

interface Version {
  readonly version: string
  readonly schema: GraphQLSchema
  readonly removedAt?: string
  readonly removedAtMs?: number
}

const dayMs = 86_400_000

/** A real date `YYYY-MM-DD`: its UTC midnight in ms, else undefined. */
export const dateMs = (v: string): number | undefined => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v)
  if (!m) return undefined
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]) ? d.getTime() : undefined
}

const reject = (reason: string): never => {
  throw new AdminRejected({ reason })
}

const schemaOf = (spec: ApiVersionSpec): GraphQLSchema => {
  if (spec.schema === undefined) return serviceSchema()
  let schema: GraphQLSchema
  try {
    schema = buildSchema(spec.schema)
  } catch (e) {
    return reject(`setApiVersions: the schema of ${spec.version} does not parse: ${e instanceof Error ? e.message : String(e)}`)
  }
  const problems = validateSchema(schema)
  if (problems.length > 0) return reject(`setApiVersions: the schema of ${spec.version} is not valid: ${problems.map((p) => p.message).join("; ")}`)
  if (!schema.getQueryType()) return reject(`setApiVersions: the schema of ${spec.version} has no Query type`)
  return schema
}

const versionOf = (spec: ApiVersionSpec): Version => {
  if (dateMs(spec.version) === undefined) reject(`setApiVersions: version ${JSON.stringify(spec.version)} is not a date YYYY-MM-DD`)
  const removedAtMs = spec.removedAt === undefined ? undefined : dateMs(spec.removedAt)
  if (spec.removedAt !== undefined && removedAtMs === undefined) {
    reject(`setApiVersions: removedAt of ${spec.version}, ${JSON.stringify(spec.removedAt)}, is not a date YYYY-MM-DD`)
  }
  return {
    version: spec.version,
    schema: schemaOf(spec),
    ...(spec.removedAt === undefined ? {} : { removedAt: spec.removedAt, removedAtMs: removedAtMs! })
  }
}

export class ApiVersions {
  private versions: ReadonlyArray<Version> = [{ version: DEFAULT_API_VERSION, schema: serviceSchema() }]
  private warnDays = DEFAULT_WARN_DAYS

  constructor(private readonly clock: VirtualClock) {}

  /** Replaces the versions served (at least one; each date once). */
  set(specs: ReadonlyArray<ApiVersionSpec>, warnDays: number = DEFAULT_WARN_DAYS): void {
    if (specs.length === 0) reject("setApiVersions: give at least one version")
    if (!Number.isFinite(warnDays) || warnDays < 0) reject(`setApiVersions: warnDays must be a number of days >= 0, got ${warnDays}`)
    const versions = specs.map(versionOf).sort((a, b) => a.version.localeCompare(b.version))
    const twice = versions.find((v, i) => i > 0 && versions[i - 1]!.version === v.version)
    if (twice) reject(`setApiVersions: version ${twice.version} is given twice`)
    this.versions = versions
    this.warnDays = warnDays
  }

  private removed(v: Version, now: number) {
    return v.removedAtMs !== undefined && now >= v.removedAtMs
  }

  private deprecated(v: Version, now: number) {
    return v.removedAtMs !== undefined && now >= v.removedAtMs - this.warnDays * dayMs
  }

  list(): { readonly versions: ReadonlyArray<ApiVersionStatus>; readonly warnDays: number } {
    const now = this.clock.nowMs()
    return {
      warnDays: this.warnDays,
      versions: this.versions.map((v) => ({
        version: v.version,
        ...(v.removedAt === undefined ? {} : { removedAt: v.removedAt }),
        status: this.removed(v, now) ? "removed" : this.deprecated(v, now) ? "deprecated" : "supported"
      }))
    }
  }

  /** The version that answers a request for `requested` (the header's value; undefined when absent). */
  resolve(requested: string | undefined): ServedVersion {
    const now = this.clock.nowMs()
    const supported = this.versions.filter((v) => !this.removed(v, now))
    // every version removed would leave the service without an API: the newest one goes on answering
    const pool = supported.length > 0 ? supported : [this.versions[this.versions.length - 1]!]
    const chosen = pool.find((v) => v.version === requested) ?? pool[0]!
    return {
      version: chosen.version,
      schema: chosen.schema,
      ...(this.deprecated(chosen, now)
        ? { warning: `API version ${chosen.version} is deprecated and will be removed on ${chosen.removedAt}; move to a newer version` }
        : {})
    }
  }
}
