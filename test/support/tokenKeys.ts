import { SqlClient } from "@effect/sql"
import { Effect, Redacted } from "effect"
import * as crypto from "node:crypto"
import { encryptWith } from "../../src/auth/TokenCipher.js"
import { keyEntry } from "../../src/auth/TokenKey.js"

/**
 * The account's stored tokens replaced by values encrypted under a key this process does not have (as a replica with
 * another key would have written them before the key check existed). Returns that key's id.
 */
export const storeUnderForeignKey = (accountId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const foreign = keyEntry(Redacted.make(crypto.randomBytes(32)))
    yield* sql`
      UPDATE oauth_tokens SET access_token = ${encryptWith(foreign, Redacted.make("access-under-another-key"))},
        refresh_token = ${encryptWith(foreign, Redacted.make("refresh-under-another-key"))}
      WHERE account_id = ${accountId}`
    return foreign.id
  })
