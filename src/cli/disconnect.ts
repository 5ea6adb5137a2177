import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { AuthLayer } from "./app.js"
import { Connections } from "../auth/Connections.js"
import { disconnectAccount } from "../auth/Disconnect.js"
import { resolveAccounts } from "./accountSelection.js"
import { withHelp } from "./help.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"

const account = Options.text("account").pipe(Options.withPseudoName("ID|NAME"), Options.withDescription("The account to disconnect, by id or name"), Options.optional)
const all = Options.boolean("all").pipe(Options.withDescription("Disconnect every account that is not disconnected yet"))

/** appDisconnect for each account, then tokens deleted and the connection marked disconnected. */
export const disconnectAccounts = (accountIds: ReadonlyArray<string>) =>
  Effect.forEach(accountIds, (accountId) =>
    disconnectAccount(accountId).pipe(
      Effect.tap((outcome) =>
        Console.log(
          outcome._tag === "Disconnected"
            ? `disconnected ${accountId}`
            : outcome._tag === "AlreadyRevoked"
              ? `disconnected ${accountId} (the service had already revoked its tokens)`
              : `${accountId} was already disconnected`
        )
      ),
      Effect.map(() => true),
      Effect.catchAll((error) => Console.error(`cannot disconnect ${accountId}: ${error.message}`).pipe(Effect.as(false)))
    )
  )

export const disconnectCommand = withHelp(Command.make("disconnect", { account, all }, (options) =>
  Effect.gen(function* () {
    if (Option.isSome(options.account) === options.all) {
      return yield* new ExitWith({ code: ExitCodes.usage, message: "disconnect: give exactly one of --account ID or --all" })
    }
    const all = yield* (yield* Connections).list()
    const named = Option.isSome(options.account) ? resolveAccounts("--account", [options.account.value], all) : all.filter((c) => c.status !== "disconnected").map((c) => c.accountId)
    if (named instanceof ExitWith) return yield* named
    const ids = named
    const results = yield* disconnectAccounts(ids)
    if (results.some((ok) => !ok)) return yield* new ExitWith({ code: ExitCodes.failure })
  }).pipe(Effect.provide(AuthLayer))
), {
  purpose: "Disconnect accounts from the app, at the service and here.",
  details: "Calls the appDisconnect mutation (its errors are shown), then deletes the account's tokens and marks the connection disconnected. Give exactly one of --account or --all.",
  examples: ['account-sync disconnect --account "Northwind Landscaping"', "account-sync disconnect --all"]
})
