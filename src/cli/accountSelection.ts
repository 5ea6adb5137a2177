import type { Connection } from "../auth/Connections.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { suggestion } from "./didYouMean.js"
import { safe } from "./output/text.js"

/** How many connected accounts an error lists before "and N more". */
const listed = 10

const described = (c: Connection) => `${c.accountName} (${c.accountId})`

const choices = (connections: ReadonlyArray<Connection>) =>
  connections.length === 0
    ? "no account is connected (connect one with `account-sync connect`)"
    : `the connected accounts are ${connections.slice(0, listed).map(described).join(", ")}${connections.length > listed ? ` and ${connections.length - listed} more (account-sync status lists them)` : ""}`

/**
 * The account ids that `--account` values name: each value is an account's id, or its name when no id is equal to it
 * (names compared ignoring case). An empty value, a name two accounts share, or a value that names no connected
 * account is bad usage (exit 2), with the accounts it could have meant.
 */
export const resolveAccounts = (flag: string, given: ReadonlyArray<string>, connections: ReadonlyArray<Connection>): ReadonlyArray<string> | ExitWith => {
  const ids: Array<string> = []
  for (const value of given) {
    if (value.trim().length === 0) return new ExitWith({ code: ExitCodes.usage, message: `${flag}: expected an account id or name, got an empty value` })
    const byId = connections.find((c) => c.accountId === value)
    if (byId !== undefined) {
      ids.push(byId.accountId)
      continue
    }
    const byName = connections.filter((c) => c.accountName.toLowerCase() === value.trim().toLowerCase())
    if (byName.length === 1) {
      ids.push(byName[0]!.accountId)
      continue
    }
    const message =
      byName.length > 1
        ? `${flag} ${value}: ${byName.length} accounts have this name; give the id of one: ${byName.map(described).join(", ")}`
        : `${flag} ${value}: no connected account has this id or name; ${choices(connections)}`
    return new ExitWith({ code: ExitCodes.usage, message: safe(message) })
  }
  return [...new Set(ids)]
}

/** The stream names `--stream` values give, each checked against `known` (exit 2 naming the value and the streams). */
export const checkStreams = (flag: string, given: ReadonlyArray<string>, known: ReadonlyArray<string>): ExitWith | undefined => {
  const unknown = given.find((name) => !known.includes(name))
  return unknown === undefined
    ? undefined
    : new ExitWith({ code: ExitCodes.usage, message: safe(`${flag} ${unknown}: no such stream${suggestion(unknown, known)} the streams are ${known.join(", ")}`) })
}
