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
    /** Kept for 10 minutes; refused (PendingFlowsFull) when OAUTH_PENDING_MAX flows are pending, expired ones dropped first. */
    readonly save: (state: string, verifier: Option.Option<Redacted.Redacted<string>>) => Effect.Effect<void, SqlError.SqlError | PendingFlowsFull>
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
    const { pendingMax } = (yield* AnonymousLimits).settings
    return {
      save: (state, verifier) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const encrypted = Option.match(verifier, { onNone: () => null, onSome: (v) => cipher.encrypt(v) })
          // expired flows can never complete: drop them as new ones arrive
          yield* sql`DELETE FROM oauth_pending WHERE expires_at < ${new Date(now)}`
          // then one more only while fewer than the cap are pending (anyone can start a flow: each is a row)
          const inserted = yield* sql`
            INSERT INTO oauth_pending (state, code_verifier, created_at, expires_at)
            SELECT ${state}, ${encrypted}, ${new Date(now)}, ${new Date(now + pendingFlowLifetimeMs)}
            WHERE (SELECT count(*) FROM oauth_pending) < ${pendingMax}
            RETURNING state`
          if (inserted.length === 0) return yield* new PendingFlowsFull({ max: pendingMax })
        }),
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
