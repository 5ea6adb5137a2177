import type { EmulatorStats } from "./EmulatorAdmin.js"

/** Counters behind `admin.stats()`. */
export class StatsCounter {
  tokenRequests = { authorization_code: 0, refresh_token: 0, failed: 0 }
  graphqlRequests = 0
  throttled = 0
  rateLimited = 0
  faultsInjected = { error: 0, drop: 0, truncate: 0, latency: 0 }
  refreshesByAccount: Record<string, number> = {}
  costPointsByAccount: Record<string, number> = {}

  snapshot(): EmulatorStats {
    return {
      tokenRequests: { ...this.tokenRequests },
      graphqlRequests: this.graphqlRequests,
      throttled: this.throttled,
      rateLimited: this.rateLimited,
      faultsInjected: { ...this.faultsInjected },
      refreshesByAccount: { ...this.refreshesByAccount },
      costPointsByAccount: { ...this.costPointsByAccount }
    }
  }

  reset(): void {
    this.tokenRequests = { authorization_code: 0, refresh_token: 0, failed: 0 }
    this.graphqlRequests = 0
    this.throttled = 0
    this.rateLimited = 0
    this.faultsInjected = { error: 0, drop: 0, truncate: 0, latency: 0 }
    this.refreshesByAccount = {}
    this.costPointsByAccount = {}
  }
}
