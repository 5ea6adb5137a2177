import { Context, Effect, Layer, type Redacted } from "effect"
import type { TokenKeyMismatch } from "./errors.js"
import { decryptWith, encryptWith } from "./tokenCrypto.js"
import { TokenKey } from "./TokenKey.js"
import { checkTokenKey } from "./TokenKeyCheck.js"

export { decryptWith, encryptWith, keyIdOfValue } from "./tokenCrypto.js"

export class TokenCipher extends Context.Tag("account-sync/TokenCipher")<
  TokenCipher,
  {
    /** Under the current key. */
    readonly encrypt: (plaintext: Redacted.Redacted<string>) => Buffer
    /** Under any key of the ring. `what` names the value for the error ("refresh token of account X"). */
    readonly decrypt: (stored: Uint8Array, what: string) => Effect.Effect<Redacted.Redacted<string>, TokenKeyMismatch>
  }
>() {}

/**
 * The cipher over the configured keys, once the key check passed: a process whose key is not the one the database's
 * tokens are written under never gets one (it fails to start with a configuration error).
 */
export const TokenCipherLive = Layer.effect(
  TokenCipher,
  Effect.gen(function* () {
    const ring = yield* TokenKey
    yield* checkTokenKey(ring)
    return TokenCipher.of({
      encrypt: (plaintext) => encryptWith(ring.current, plaintext),
      decrypt: (stored, what) => decryptWith(ring, stored, what)
    })
  })
)
