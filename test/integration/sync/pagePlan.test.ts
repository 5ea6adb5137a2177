import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { pageJson } from "../../../src/sync/landing/pageParams.js"
import { pageStatement } from "../../../src/sync/landing/pageStatement.js"
import { pageSteps } from "../../../src/sync/landing/steps.js"
import { jobsStream } from "../../../src/sync/streams/jobs.js"
import { TestDatabaseLive } from "../../support/database.js"

const account = "acc-page-plan"
const parents = 3_000
const perParent = 4
const page = 100

/** Every plan node with the rows it read (actual rows x loops) and the rows its join filters dropped. */
const nodesOf = (plan: Record<string, unknown>): Array<Record<string, unknown>> => [
  plan,
  ...((plan["Plans"] as Array<Record<string, unknown>> | undefined) ?? []).flatMap(nodesOf)
]

layer(TestDatabaseLive, { timeout: 60_000, excludeTestServices: true })("a page of parents with line items and custom fields, tables without statistics", (it) => {
  it.effect("reads the line items and custom fields of the page's parents only, whatever the account holds", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // an account whose earlier pages landed 3,000 jobs with 4 line items and a custom field each, never analyzed
      yield* sql`INSERT INTO job_line_items (account_id, id, job_id, raw)
        SELECT ${account}, 'li-' || p || '-' || k, 'job-' || p, '{}' FROM generate_series(1, ${parents}::int) p, generate_series(1, ${perParent}::int) k`
      yield* sql`INSERT INTO custom_fields (account_id, parent_type, parent_id, field_key, label, kind, raw)
        SELECT ${account}, 'Job', 'job-' || p, 'cf-1', 'Gate code', 'CustomFieldText', '{}' FROM generate_series(1, ${parents}::int) p`
      const analyzed = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE schemaname = current_schema()
          AND relname IN ('job_line_items', 'custom_fields') AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)`
      if (analyzed[0]!.n > 0) return yield* Effect.die("the fresh schema was analyzed already: this test proves nothing")

      // the next page: 100 of those jobs again, each with its line items and custom field
      const nodes = Array.from({ length: page }, (_, i) => {
        const node = {
          id: `job-${i + 1}`,
          lineItems: { nodes: Array.from({ length: perParent }, (_, k) => ({ id: `li-${i + 1}-${k + 1}` })) },
          customFields: [{ __typename: "CustomFieldText", id: "cf-1", label: "Gate code", valueText: "1234" }]
        }
        return { node, raw: node }
      })
      const values = { accountId: account, stream: jobsStream, page: pageJson(jobsStream, [{ nodes: nodes as never, body: undefined }]), pass: undefined, recordSeen: false, fetchedAt: undefined, lease: undefined }
      const [text, params] = pageStatement(sql, pageSteps(jobsStream), values).compile()
      const [explained] = yield* sql.unsafe<{ "QUERY PLAN": Array<{ Plan: Record<string, unknown> }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params)
      const nodesRead = nodesOf(explained!["QUERY PLAN"][0]!.Plan)
      const bound = page * perParent * 2
      for (const n of nodesRead) {
        const read = Number(n["Actual Rows"] ?? 0) * Number(n["Actual Loops"] ?? 1)
        const where = `${String(n["Node Type"])} ${String(n["Relation Name"] ?? n["Subplan Name"] ?? "")}`
        // a loop over the account's line items for each of the page's was 3,000 x 4 x 100 comparisons
        expect(Number(n["Rows Removed by Join Filter"] ?? 0), where).toBeLessThan(bound)
        if (n["Relation Name"] === "job_line_items" || n["Relation Name"] === "custom_fields") expect(read, where).toBeLessThanOrEqual(bound)
      }
      // and nothing of the page was removed: its line items and custom fields are all there
      const live = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM job_line_items WHERE account_id = ${account} AND deleted_at IS NULL`
      expect(live[0]!.n).toBe(parents * perParent)
    })
  )
})
