import { describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Option } from "effect"
import { healthMetrics } from "../../../src/health/healthMetrics.js"
import { promtoolAvailable, promtoolSkipReason } from "../../support/promtool.js"

const root = path.resolve(import.meta.dirname, "../../..")
const dir = path.join(root, "config/prometheus")
const rules = path.join(dir, "account-sync.rules.yml")

/** `promtool ARGS` in config/prometheus: its exit code and everything it said. */
const promtool = (...args: ReadonlyArray<string>) => {
  try {
    return { code: 0, output: execFileSync("promtool", args, { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }) }
  } catch (e) {
    const failed = e as { status?: number; stdout?: string; stderr?: string }
    return { code: failed.status ?? 1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` }
  }
}

describe("the shipped Prometheus alerting rules", () => {
  it.skipIf(!promtoolAvailable)(`pass \`promtool check rules\`${promtoolSkipReason}`, () => {
    const check = promtool("check", "rules", "account-sync.rules.yml")
    expect(check.code, check.output).toBe(0)
    expect(check.output).toContain("SUCCESS: 7 rules found")
  })

  it.skipIf(!promtoolAvailable)(`pass their unit tests, \`promtool test rules\` (stale, failing, revoked, queue, API version)${promtoolSkipReason}`, () => {
    const test = promtool("test", "rules", "account-sync.rules.test.yml")
    expect(test.code, test.output).toBe(0)
    expect(test.output).toContain("SUCCESS")
  })

  it("every rule is unit-tested, and every metric a rule reads is one the program exports", () => {
    const text = fs.readFileSync(rules, "utf8")
    const alerts = [...text.matchAll(/- alert: (\w+)/g)].map((m) => m[1]!)
    const tests = fs.readFileSync(path.join(dir, "account-sync.rules.test.yml"), "utf8")
    for (const alert of alerts) expect(tests, `${alert} has a test`).toContain(`alertname: ${alert}`)
    const counters = fs.readFileSync(path.join(root, "src/observability/metrics.ts"), "utf8")
    const state = healthMetrics({ at: new Date(0), accounts: [], streams: [], events: [], apiVersion: { pinned: "2025-01-20", state: Option.none() } }).map((m) => m.name)
    const read = new Set([...text.matchAll(/\baccount_sync_\w+/g)].map((m) => m[0]))
    expect(read.size).toBeGreaterThanOrEqual(7)
    for (const name of read) expect(state.includes(name) || counters.includes(`"${name}"`), `${name} is exported`).toBe(true)
  })
})
