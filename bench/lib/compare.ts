import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import type { EmulatorAdmin, ListedRecord } from "../../src/emulator/EmulatorAdmin.js"
import { sanitizeJson, sanitizeText } from "../../src/sync/landing/sanitize.js"
import { jobScalarsStream } from "../../test/support/jobsOnly.js"

const jobsStream = jobScalarsStream

/** JSON with object keys sorted at every level (jsonb does not keep the service's key order). */
const canonical = (v: unknown): string =>
  v === null || typeof v !== "object"
    ? JSON.stringify(v)
    : Array.isArray(v)
      ? `[${v.map(canonical).join(",")}]`
      : `{${Object.keys(v as object)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
          .join(",")}}`

const hash = (row: Record<string, unknown>) => crypto.createHash("sha1").update(canonical(row)).digest("hex")

const timestamp = new Set(jobsStream.columns.filter((c) => c.type === "timestamptz").map((c) => c.column))
/** The fields the stream asks for: what `raw` holds of the service's full record. */
const selected = new Set(["id", ...jobsStream.columns.filter((c) => c.selected).map((c) => c.path[0]!)])

/** The row a live job must be in `jobs`: every mapped column (timestamps as epoch ms) and `raw`. */
const serviceRowHash = (job: ListedRecord) => {
  const row: Record<string, unknown> = { id: job.id }
  for (const c of jobsStream.columns) {
    const v = c.selected ? job[c.path[0]!] : null
    row[c.column] = v === null || v === undefined ? null : timestamp.has(c.column) ? Date.parse(v as string) : typeof v === "string" ? sanitizeText(v) : v
  }
  row.raw = sanitizeJson(Object.fromEntries(Object.entries(job).filter(([field]) => selected.has(field))))
  return hash(row)
}

const warehouseRowHash = (r: Record<string, unknown>) => {
  const row: Record<string, unknown> = { id: r.id }
  for (const c of jobsStream.columns) {
    const v = r[c.column]
    row[c.column] = v instanceof Date ? v.getTime() : v
  }
  row.raw = r.raw
  return hash(row)
}

export interface AccountComparison {
  readonly accountId: string
  readonly serviceRows: number
  /** Live in the service, absent from the warehouse. */
  readonly missing: number
  /** In both, some mapped column or raw differs. */
  readonly mismatched: number
  /** Live in the service, marked deleted in the warehouse. */
  readonly wronglyDeleted: number
  /** Gone from the service, still live in the warehouse (ids). */
  readonly stillLive: ReadonlyArray<string>
  readonly duplicates: number
  readonly examples: ReadonlyArray<string>
}

/** Per-row hash compare of the account's jobs: the emulator's live jobs against every warehouse row. */
export const compareAccount = (admin: EmulatorAdmin, accountId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const service = yield* admin.listRecords({ accountId, collection: "jobs" })
    const rows = yield* sql<Record<string, unknown>>`SELECT * FROM jobs WHERE account_id = ${accountId}`
    const duplicates = (yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM (SELECT id FROM jobs WHERE account_id = ${accountId} GROUP BY id HAVING count(*) > 1) d`)[0]!.n
    const stored = new Map(rows.map((r) => [String(r.id), r] as const))
    const live = new Set<string>()
    let missing = 0
    let mismatched = 0
    let wronglyDeleted = 0
    const examples: Array<string> = []
    for (const job of service) {
      live.add(job.id)
      const r = stored.get(job.id)
      if (!r) {
        missing++
        if (examples.length < 3) examples.push(`missing ${job.id}`)
        continue
      }
      if (r.deleted_at !== null) {
        wronglyDeleted++
        if (examples.length < 3) examples.push(`marked deleted but live: ${job.id}`)
      }
      if (serviceRowHash(job) !== warehouseRowHash(r)) {
        mismatched++
        if (examples.length < 3) examples.push(`differs: ${job.id}`)
      }
    }
    const stillLive = rows.filter((r) => r.deleted_at === null && !live.has(String(r.id))).map((r) => String(r.id))
    return { accountId, serviceRows: service.length, missing, mismatched, wronglyDeleted, stillLive, duplicates, examples } satisfies AccountComparison
  })
