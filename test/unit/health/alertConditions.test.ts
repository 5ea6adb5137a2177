import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import type { Connection } from "../../../src/auth/Connections.js"
import { conditionsOf, slackEscape, webhookPayload } from "../../../src/health/alertConditions.js"
import type { HealthSnapshot } from "../../../src/health/Health.js"

const at = new Date("2026-11-24T12:00:00Z")
const connection = (accountId: string, status: Connection["status"], statusReason: string | null = null): Connection => ({
  accountId,
  accountName: `Name of ${accountId}`,
  status,
  statusReason,
  scopes: [],
  connectedAt: new Date("2026-01-01T00:00:00Z"),
  updatedAt: at,
  tokenExpiresAt: null
})

const snapshot = (overrides: Partial<HealthSnapshot>): HealthSnapshot => ({
  at,
  accounts: [],
  streams: [],
  events: [],
  apiVersion: { pinned: "2025-01-20", state: Option.none() },
  ...overrides
})

describe("alert conditions (ALERT_WEBHOOK_URL)", () => {
  it("a healthy installation raises nothing; one failure in a row is not yet an alert", () => {
    expect(conditionsOf(snapshot({ accounts: [{ connection: connection("a1", "active"), failuresInARow: 1, lastError: "boom" }] }))).toEqual([])
  })

  it("each condition has a key stable while it holds: failing (twice in a row), revoked, disconnected, stale per stream, the API version", () => {
    const conditions = conditionsOf(
      snapshot({
        accounts: [
          { connection: connection("a1", "active"), failuresInARow: 3, lastError: "jobs: query failed" },
          { connection: connection("a2", "revoked", "invalid_grant"), failuresInARow: 0, lastError: null },
          { connection: connection("a3", "disconnected", "APP_DISCONNECT webhook"), failuresInARow: 5, lastError: "x" }
        ],
        streams: [
          { accountId: "a1", stream: "jobs", currentAt: new Date("2026-11-24T08:00:00Z"), ageMs: 4 * 3_600_000, cadenceMs: 3_600_000, staleAfterMs: 7_200_000, stale: true },
          { accountId: "a1", stream: "clients", currentAt: at, ageMs: 0, cadenceMs: 900_000, staleAfterMs: 4_500_000, stale: false }
        ],
        apiVersion: {
          pinned: "2025-01-20",
          state: Option.some({ requested: "2025-01-20", answered: "2025-07-01", answeredSince: at, warning: "going away", warnedSince: at, observedAt: at })
        }
      })
    )
    expect(conditions.map((c) => [c.accountId, c.condition])).toEqual([
      ["a1", "failing"],
      ["a2", "revoked"],
      ["a3", "disconnected"],
      ["a1", "stale:jobs"],
      ["", "api-version-warning:2025-07-01"],
      ["", "api-version-replaced:2025-07-01"]
    ])
    expect(conditions[0]!.text).toBe("account Name of a1 (a1) failed 3 runs in a row; the last: jobs: query failed")
    expect(conditions[2]!.text).toBe("account Name of a3 (a3) is disconnected: APP_DISCONNECT webhook")
    expect(conditions[3]!.text).toBe("stream jobs of account Name of a1 (a1) is stale: last known current 2026-11-24T08:00:00.000Z (4h ago; expected within 2h)")
  })

  it("the payload is Slack's {text}, with &, < and > escaped and control characters shown, not acted on", () => {
    expect(slackEscape("a & <b> c")).toBe("a &amp; &lt;b&gt; c")
    const [revoked] = conditionsOf(snapshot({ accounts: [{ connection: { ...connection("a9", "revoked", "<script>\u001b[2J"), accountName: "R&D <x>" }, failuresInARow: 0, lastError: null }] }))
    expect(webhookPayload([revoked!])).toEqual({
      text: "account-sync: 1 new alert\n• account R&amp;D &lt;x&gt; (a9) is revoked: &lt;script&gt;\\u001b[2J; reconnect it (account-sync connect)"
    })
  })
})
