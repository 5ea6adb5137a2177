import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { AuthLayer } from "./app.js"
import { alignedTable } from "./table.js"
import { type Connection, Connections } from "../auth/Connections.js"

/** One connection as `status --json` prints it. */
export const connectionJson = (c: Connection) => ({
  accountId: c.accountId,
  accountName: c.accountName,
  status: c.status,
  reason: c.statusReason,
  scopes: c.scopes,
  connectedAt: c.connectedAt.toISOString(),
  updatedAt: c.updatedAt.toISOString(),
  tokenExpiresAt: c.tokenExpiresAt?.toISOString() ?? null,
  lastRun: c.lastRun
    ? {
        stream: c.lastRun.stream,
        kind: c.lastRun.kind,
        outcome: c.lastRun.outcome,
        startedAt: c.lastRun.startedAt.toISOString(),
        finishedAt: c.lastRun.finishedAt?.toISOString() ?? null
      }
    : null
})

const reasonText = (c: Connection) =>
  c.status === "revoked" ? `${c.statusReason ?? "revoked"}; reconnect with \`account-sync connect\`` : (c.statusReason ?? "")

/** A plain-text table: id, name, status, reason, token expiry, last run. */
export const connectionsTable = (connections: ReadonlyArray<Connection>): string => {
  if (connections.length === 0) return "no connected accounts (connect one with `account-sync connect`)"
  const header = ["ACCOUNT", "NAME", "STATUS", "REASON", "TOKEN EXPIRES", "LAST RUN"]
  const rows = connections.map((c) => [
    c.accountId,
    c.accountName,
    c.status,
    reasonText(c),
    c.tokenExpiresAt?.toISOString() ?? "-",
    c.lastRun ? `${c.lastRun.startedAt.toISOString()} ${c.lastRun.stream} ${c.lastRun.outcome}` : "never"
  ])
  return alignedTable([header, ...rows])
}

const json = Options.boolean("json").pipe(Options.withDescription("Print the connections as JSON"))

export const statusCommand = Command.make("status", { json }, ({ json }) =>
  Effect.gen(function* () {
    const connections = yield* Connections
    const all = yield* connections.list()
    yield* Console.log(json ? JSON.stringify(all.map(connectionJson), null, 2) : connectionsTable(all))
  }).pipe(Effect.provide(AuthLayer))
).pipe(Command.withDescription("Show every connection: status, reason, token expiry and last sync run."))
