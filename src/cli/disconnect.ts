import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { AuthLayer } from "./app.js"
import { Connections } from "../auth/Connections.js"
import { disconnectAccount } from "../auth/Disconnect.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"

const account = Options.text("account").pipe(Options.withDescription("The account id to disconnect"), Options.optional)
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

export const disconnectCommand = Command.make("disconnect", { account, all }, (options) =>
  Effect.gen(function* () {
    if (Option.isSome(options.account) === options.all) {
      return yield* new ExitWith({ code: ExitCodes.usage, message: "disconnect: give exactly one of --account ID or --all" })
    }
    const connections = yield* Connections
    const ids = Option.isSome(options.account)
      ? [options.account.value]
      : (yield* connections.list()).filter((c) => c.status !== "disconnected").map((c) => c.accountId)
    const results = yield* disconnectAccounts(ids)
    if (results.some((ok) => !ok)) return yield* new ExitWith({ code: ExitCodes.failure })
  }).pipe(Effect.provide(AuthLayer))
).pipe(
  Command.withDescription(
    "Disconnect accounts: call appDisconnect at the service (its errors are shown), then delete the tokens and mark them disconnected."
  )
)
