import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Context, Effect, Layer, Option, type Redacted, Schema } from "effect"
import { pendingFlowLifetimeMs } from "./Authorization.js"
import { AnonymousLimits } from "./AnonymousLimits.js"
import { PendingFlowExpired, PendingFlowsFull, type TokenKeyMismatch, UnknownState } from "./errors.js"
import { TokenCipher } from "./TokenCipher.js"

const PendingRow = Schema.Struct({
  code_verifier: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf
})
const decodeRows = Schema.decodeUnknown(Schema.Array(PendingRow))

/** Flows begun by `serve` (`oauth_pending`): state and encrypted PKCE verifier, so any replica can finish them. */
export class PendingFlows extends Context.Tag("account-sync/PendingFlows")<
  PendingFlows,
  {
    /**
     * Kept for 10 minutes; refused (PendingFlowsFull) when OAUTH_PENDING_PER_ADDRESS flows started from `address`, or
     * OAUTH_PENDING_MAX in all, are pending; expired ones are dropped first.
     */
    readonly save: (
      state: string,
      verifier: Option.Option<Redacted.Redacted<string>>,
      address: string
    ) => Effect.Effect<void, SqlError.SqlError | PendingFlowsFull>
    /** Consumes the flow: a second callback with the same state is `UnknownState` (replayed). */
    readonly take: (
      state: string
    ) => Effect.Effect<Option.Option<Redacted.Redacted<string>>, UnknownState | PendingFlowExpired | TokenKeyMismatch | SqlError.SqlError>
  }
>() {}

export const PendingFlowsLive = Layer.effect(
  PendingFlows,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cipher = yield* TokenCipher
    const { pendingMax, pendingPerAddress } = (yield* AnonymousLimits).settings
    const CapRow = Schema.Struct({ from_address: Schema.Number, total: Schema.Number })
    return {
      save: (state, verifier, address) =>
        sql.withTransaction(
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const encrypted = Option.match(verifier, { onNone: () => null, onSome: (v) => cipher.encrypt(v) })
            // one save at a time (callbacks still take theirs): the counts below hold until the insert commits
            yield* sql`LOCK TABLE oauth_pending IN SHARE ROW EXCLUSIVE MODE`
            // expired flows can never complete: drop them as new ones arrive
            yield* sql`DELETE FROM oauth_pending WHERE expires_at < ${new Date(now)}`
            // anyone can start a flow, and each is a row: a cap per client address, and one far above it for all
            const [counts] = yield* sql`
              SELECT count(*) FILTER (WHERE client_address = ${address})::int AS from_address, count(*)::int AS total FROM oauth_pending`.pipe(
              Effect.flatMap(Schema.decodeUnknown(Schema.Array(CapRow))),
              Effect.orDie
            )
            if (counts!.from_address >= pendingPerAddress) return yield* new PendingFlowsFull({ max: pendingPerAddress, address })
            if (counts!.total >= pendingMax) return yield* new PendingFlowsFull({ max: pendingMax })
            yield* sql`
              INSERT INTO oauth_pending (state, code_verifier, created_at, expires_at, client_address)
              VALUES (${state}, ${encrypted}, ${new Date(now)}, ${new Date(now + pendingFlowLifetimeMs)}, ${address})`
          })
        ),
      take: (state) =>
        Effect.gen(function* () {
          const rows = yield* sql`DELETE FROM oauth_pending WHERE state = ${state} RETURNING code_verifier, created_at, expires_at`.pipe(
            Effect.flatMap(decodeRows),
            Effect.orDie
          )
          const row = rows[0]
          if (row === undefined) return yield* new UnknownState({ reason: "no pending flow has this state (forged, replayed, or already finished)" })
          if (row.expires_at.getTime() < (yield* Clock.currentTimeMillis)) return yield* new PendingFlowExpired({ startedAt: row.created_at })
          return row.code_verifier === null ? Option.none() : Option.some(yield* cipher.decrypt(row.code_verifier, "PKCE verifier of a pending flow"))
        })
    }
  })
)
