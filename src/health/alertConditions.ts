import { Duration, Option } from "effect"
import type { HealthSnapshot } from "./Health.js"
import { printable } from "../observability/printable.js"

/**
 * The conditions worth a message to people without Prometheus (ALERT_WEBHOOK_URL), from the health snapshot: an
 * account that failed twice in a row, a revoked or disconnected connection, a stale stream, the API version warned
 * about or replaced. Each has a key, so it is sent once while it holds.
 */
export interface AlertCondition {
  /** '' for conditions of the whole installation (the API version). */
  readonly accountId: string
  /** Stable while the condition holds: `failing`, `revoked`, `disconnected`, `stale:<stream>`, `api-version-*:<version>`. */
  readonly condition: string
  /** The line people read (outside text made printable; escaped for the webhook when sent). */
  readonly text: string
}

const ago = (ms: number) => Duration.format(Duration.seconds(Math.round(ms / 1000)))

export const conditionsOf = (s: HealthSnapshot): ReadonlyArray<AlertCondition> => {
  const out: Array<AlertCondition> = []
  const names = new Map(s.accounts.map((a) => [a.connection.accountId, `account ${printable(a.connection.accountName, 80)} (${a.connection.accountId})`]))
  for (const a of s.accounts) {
    const { accountId, status, statusReason } = a.connection
    const who = names.get(accountId)!
    const reason = statusReason ? `: ${printable(statusReason)}` : ""
    if (status === "revoked") out.push({ accountId, condition: "revoked", text: `${who} is revoked${reason}; reconnect it (account-sync connect)` })
    if (status === "disconnected") out.push({ accountId, condition: "disconnected", text: `${who} is disconnected${reason}` })
    if (status === "active" && a.failuresInARow >= 2) {
      out.push({ accountId, condition: "failing", text: `${who} failed ${a.failuresInARow} runs in a row; the last: ${printable(a.lastError ?? "see the log")}` })
    }
  }
  for (const f of s.streams.filter((f) => f.stale)) {
    out.push({
      accountId: f.accountId,
      condition: `stale:${f.stream}`,
      text: `stream ${f.stream} of ${names.get(f.accountId) ?? f.accountId} is stale: last known current ${f.currentAt?.toISOString() ?? "never"} (${ago(f.ageMs)} ago; expected within ${ago(f.staleAfterMs)})`
    })
  }
  Option.map(s.apiVersion.state, (v) => {
    const answered = printable(v.answered, 40)
    if (v.warning !== null) out.push({ accountId: "", condition: `api-version-warning:${answered}`, text: `the service warns about API version ${answered}: ${printable(v.warning)}` })
    if (v.answered !== s.apiVersion.pinned) {
      out.push({
        accountId: "",
        condition: `api-version-replaced:${answered}`,
        text: `the service replaced the pinned API version ${s.apiVersion.pinned} (SERVICE_GRAPHQL_VERSION) with ${answered}; see account-sync status`
      })
    }
  })
  return out
}

/** Text for a Slack-compatible webhook: `&`, `<` and `>` escaped (the only characters its formatting reserves). */
export const slackEscape = (text: string): string => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")

/** One message for the conditions newly raised: `{"text": ...}`. */
export const webhookPayload = (conditions: ReadonlyArray<Pick<AlertCondition, "text">>): { readonly text: string } => ({
  text: slackEscape(
    [`account-sync: ${conditions.length === 1 ? "1 new alert" : `${conditions.length} new alerts`}`, ...conditions.map((c) => `• ${c.text}`)].join("\n")
  )
})
