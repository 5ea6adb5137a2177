import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { DatabaseLayer } from "./app.js"
import { grantReader, revokeReader } from "../db/readerAccess.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { withHelp } from "./help.js"

const role = Options.text("role").pipe(Options.withPseudoName("ROLE"), Options.withDescription("The Postgres role the analyst logs in as (created beforehand, not a superuser)"))
const accounts = Options.text("account").pipe(Options.withPseudoName("ID"), Options.withDescription("An account id it may read (repeat for several)"), Options.repeated)
const revoke = Options.boolean("revoke").pipe(Options.withDescription("Take the access back (the given accounts, or all of them)"))

/** `grant-reader --role R --account ID...`: R reads those accounts' rows, in every table with accounts' rows, and no other's. */
export const grantReaderCommand = withHelp(Command.make("grant-reader", { role, accounts, revoke }, (options) =>
  Effect.gen(function* () {
    if (options.role.trim() === "") return yield* new ExitWith({ code: ExitCodes.usage, message: "grant-reader: --role is empty" })
    if (options.accounts.some((a) => a.trim() === "")) return yield* new ExitWith({ code: ExitCodes.usage, message: "grant-reader: an --account is empty" })
    if (options.revoke) {
      const left = yield* revokeReader(options.role, options.accounts)
      yield* Console.log(left.length === 0 ? `${options.role} reads no account any more` : `${options.role} still reads ${left.join(", ")}`)
      return
    }
    if (options.accounts.length === 0) return yield* new ExitWith({ code: ExitCodes.usage, message: "grant-reader: give at least one --account ID" })
    const tables = yield* grantReader(options.role, options.accounts)
    yield* Console.log(`${options.role} reads the rows of ${options.accounts.join(", ")} (and no other account's) in ${tables.length} tables: ${tables.join(", ")}`)
  }).pipe(
    Effect.catchTag("ReaderAccessRefused", (refused) => new ExitWith({ code: ExitCodes.usage, message: refused.message })),
    Effect.provide(DatabaseLayer)
  )
), {
  purpose: "Let a Postgres role read only some accounts' rows, in every table; needs only the database.",
  details: "Row-level security on every table with accounts' rows (forced on the app role too); --revoke takes it back. See docs/security.md.",
  examples: ["account-sync grant-reader --role analyst_north --account Z2lkOi8vc2VydmljZS9BY2NvdW50LzEwMDE=", "account-sync grant-reader --role analyst_north --revoke"]
})
