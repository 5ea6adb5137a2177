import { Clock, Context, Data, Duration, Effect, Layer } from "effect"
import { AnonymousLimitsConfig, type AnonymousLimitsSettings } from "../config.js"

/** Too many requests from one client address: answered 429 with Retry-After. */
export class RateLimited extends Data.TaggedError("RateLimited")<{ readonly address: string; readonly retryAfter: Duration.Duration }> {
  override get message() {
    return `too many requests from ${this.address}; retry after ${Duration.format(this.retryAfter)}`
  }
}

/** Addresses remembered at once; beyond, the fullest buckets (which equal a fresh one) are forgotten first. */
const maxAddresses = 10_000

interface Bucket {
  tokens: number
  at: number
}

/**
 * A token bucket per client address, in memory (per replica): `perMinute` requests at once, refilled at
 * `perMinute` a minute. The set of addresses is bounded, so a visitor spraying addresses cannot grow it without end.
 * (@effect/experimental's RateLimiter memory store keeps every key it ever saw.)
 */
export const makeAddressBuckets = (perMinute: number) => {
  const buckets = new Map<string, Bucket>()
  const refillPerMs = perMinute / 60_000

  const level = (bucket: Bucket, now: number) => Math.min(perMinute, bucket.tokens + (now - bucket.at) * refillPerMs)

  const forget = (now: number) => {
    for (const [address, bucket] of buckets) if (level(bucket, now) >= perMinute) buckets.delete(address)
    // still full of busy addresses: the longest-known go
    for (const address of buckets.keys()) {
      if (buckets.size < maxAddresses) break
      buckets.delete(address)
    }
  }

  return (address: string): Effect.Effect<void, RateLimited> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const known = buckets.get(address)
      if (known === undefined && buckets.size >= maxAddresses) forget(now)
      const tokens = known === undefined ? perMinute : level(known, now)
      if (tokens < 1) {
        return Effect.fail(new RateLimited({ address, retryAfter: Duration.millis(Math.ceil((1 - tokens) / refillPerMs)) }))
      }
      buckets.set(address, { tokens: tokens - 1, at: now })
      return Effect.void
    })
}

/** serve's bounds on anonymous work (OAUTH_RATE_LIMIT, OAUTH_PENDING_PER_ADDRESS, OAUTH_PENDING_MAX, HTTP_TRUST_PROXY). */
export class AnonymousLimits extends Context.Tag("account-sync/AnonymousLimits")<
  AnonymousLimits,
  {
    readonly settings: AnonymousLimitsSettings
    /** Takes one request of `address`'s budget, or fails RateLimited. */
    readonly take: (address: string) => Effect.Effect<void, RateLimited>
  }
>() {}

export const AnonymousLimitsLive = Layer.effect(
  AnonymousLimits,
  Effect.map(AnonymousLimitsConfig, (settings) => AnonymousLimits.of({ settings, take: makeAddressBuckets(settings.perMinute) }))
)
