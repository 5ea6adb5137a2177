import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeTestEmulator, type TestEmulatorShape } from "../../support/emulator.js"
import { ACCOUNT_QUERY, connect } from "../../support/emulatorClient.js"

type Outcome = "ok" | "5xx" | "drop" | "truncated"

const attempt = (url: string, init: RequestInit): Effect.Effect<Outcome> =>
  Effect.promise(async () => {
    let res: Response
    try {
      res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) })
    } catch {
      return "drop" // no answer at all
    }
    if (res.status >= 500) return "5xx"
    try {
      JSON.parse(await res.text())
      return "ok"
    } catch {
      return "truncated" // headers came, the body was cut short
    }
  })

const gql = (emu: TestEmulatorShape, token: string) =>
  attempt(`${emu.baseUrl}/api/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: ACCOUNT_QUERY })
  })

describe("fault injection", () => {
  it.scopedLive("5xx, dropped connections and truncated bodies happen at roughly the configured rates, repeatably for a seed", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const { access_token } = yield* connect(emu)
      const run = Effect.gen(function* () {
        yield* emu.admin.setFaults({ errorRate: 0.2, dropRate: 0.1, truncateRate: 0.1, seed: 42 })
        const outcomes: Array<Outcome> = []
        for (let i = 0; i < 300; i++) outcomes.push(yield* gql(emu, access_token))
        return outcomes
      })
      const first = yield* run
      const share = (o: Outcome) => first.filter((x) => x === o).length / first.length
      expect(share("5xx")).toBeGreaterThan(0.12)
      expect(share("5xx")).toBeLessThan(0.28)
      expect(share("drop")).toBeGreaterThan(0.04)
      expect(share("drop")).toBeLessThan(0.16)
      expect(share("truncated")).toBeGreaterThan(0.04)
      expect(share("truncated")).toBeLessThan(0.16)
      const stats = yield* emu.admin.stats()
      expect(stats.faultsInjected.error).toBe(first.filter((x) => x === "5xx").length)
      expect(stats.faultsInjected.drop + stats.faultsInjected.truncate).toBe(first.filter((x) => x === "drop" || x === "truncated").length)
      // same seed, same sequence
      expect(yield* run).toEqual(first)
      yield* emu.admin.setFaults({})
      expect(yield* gql(emu, access_token)).toBe("ok")
    })
  )

  it.scopedLive("token endpoint faults come before processing: a rotation is never lost to an injected fault", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator({ rotation: true })
      let { refresh_token } = yield* connect(emu)
      yield* emu.admin.setFaults({ errorRate: 0.3, dropRate: 0.2, truncateRate: 0.2, seed: 7 })
      let successes = 0
      let faults = 0
      for (let i = 0; i < 60; i++) {
        const outcome = yield* Effect.promise(async () => {
          try {
            const res = await fetch(`${emu.baseUrl}/api/oauth/token`, {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams({ grant_type: "refresh_token", client_id: emu.app.clientId, client_secret: emu.app.clientSecret, refresh_token }),
              signal: AbortSignal.timeout(5000)
            })
            const text = await res.text()
            return res.status === 200 ? (JSON.parse(text) as { refresh_token: string }) : res.status
          } catch {
            return "failed" as const
          }
        })
        if (typeof outcome === "object") {
          refresh_token = outcome.refresh_token
          successes++
        } else {
          expect(outcome === "failed" || outcome === 502 || outcome === 503).toBe(true)
          faults++
        }
        // whatever happened, the refresh token we hold still works
        expect(yield* emu.admin.isRefreshTokenValid({ clientId: emu.app.clientId, refreshToken: refresh_token })).toBe(true)
      }
      expect(successes).toBeGreaterThan(5)
      expect(faults).toBeGreaterThan(20)
    })
  )

  it.scopedLive("a latency spike delays the answer by latencyMs", () =>
    Effect.gen(function* () {
      const emu = yield* makeTestEmulator()
      const { access_token } = yield* connect(emu)
      yield* emu.admin.setFaults({ latencyRate: 1, latencyMs: 150 })
      const start = Date.now()
      expect(yield* gql(emu, access_token)).toBe("ok")
      expect(Date.now() - start).toBeGreaterThanOrEqual(145)
      expect((yield* emu.admin.stats()).faultsInjected.latency).toBe(1)
      const refused = yield* Effect.flip(emu.admin.setFaults({ errorRate: 0.7, dropRate: 0.5 }))
      expect(refused.reason).toContain("must not exceed 1")
    })
  )
})
