import type { Limits } from "./EmulatorAdmin.js"

/** The cost leaky bucket and the request-rate guard, one of each per (app, account), on the virtual clock. */

export const defaultLimits: Required<Limits> = {
  maxPoints: 10_000,
  restoreRate: 500,
  requestLimit: 2_500,
  requestWindowSeconds: 300,
  maxPageSize: 100
}

export interface ThrottleStatus {
  readonly maximumAvailable: number
  readonly currentlyAvailable: number
  readonly restoreRate: number
}

export class LeakyBucket {
  private available: number
  private lastMs: number

  constructor(
    private limits: Required<Limits>,
    nowMs: number
  ) {
    this.available = limits.maxPoints
    this.lastMs = nowMs
  }

  setLimits(limits: Required<Limits>, nowMs: number): void {
    this.restore(nowMs)
    this.limits = limits
    this.available = Math.min(this.available, limits.maxPoints)
  }

  private restore(nowMs: number): void {
    if (nowMs > this.lastMs) {
      this.available = Math.min(this.limits.maxPoints, this.available + ((nowMs - this.lastMs) / 1000) * this.limits.restoreRate)
    }
    this.lastMs = Math.max(this.lastMs, nowMs)
  }

  status(nowMs: number): ThrottleStatus {
    this.restore(nowMs)
    return {
      maximumAvailable: this.limits.maxPoints,
      currentlyAvailable: Math.floor(this.available),
      restoreRate: this.limits.restoreRate
    }
  }

  /** Whether a query of `requested` points may run now (nothing is deducted). */
  admits(requested: number, nowMs: number): boolean {
    return requested <= this.status(nowMs).currentlyAvailable
  }

  deduct(points: number, nowMs: number): void {
    this.restore(nowMs)
    this.available = Math.max(0, this.available - points)
  }
}

/** At most `requestLimit` requests in any `requestWindowSeconds`; a refused request does not count. */
export class RequestGuard {
  private times: Array<number> = []

  constructor(private limits: Required<Limits>) {}

  setLimits(limits: Required<Limits>): void {
    this.limits = limits
  }

  /** undefined when admitted (and counted), else the seconds until a slot frees up (Retry-After). */
  admit(nowMs: number): number | undefined {
    const windowMs = this.limits.requestWindowSeconds * 1000
    let drop = 0
    while (drop < this.times.length && this.times[drop]! <= nowMs - windowMs) drop++
    if (drop > 0) this.times = this.times.slice(drop)
    if (this.times.length >= this.limits.requestLimit) {
      const oldest = this.times[0] ?? nowMs
      return Math.max(1, Math.ceil((oldest + windowMs - nowMs) / 1000))
    }
    this.times.push(nowMs)
    return undefined
  }
}

/** Buckets, guards and limit overrides per (app, account), created on first use with the current defaults. */
export class LimitsBook {
  private defaults: Required<Limits> = { ...defaultLimits }
  private readonly overrides = new Map<string, Required<Limits>>()
  private readonly buckets = new Map<string, LeakyBucket>()
  private readonly guards = new Map<string, RequestGuard>()

  constructor(initial: Limits = {}) {
    this.defaults = validLimits({ ...defaultLimits, ...definedOnly(initial) })
  }

  limitsFor(appId: string, accountId: string): Required<Limits> {
    return this.overrides.get(`${appId}|${accountId}`) ?? this.defaults
  }

  bucket(appId: string, accountId: string, nowMs: number): LeakyBucket {
    const key = `${appId}|${accountId}`
    let b = this.buckets.get(key)
    if (!b) this.buckets.set(key, (b = new LeakyBucket(this.limitsFor(appId, accountId), nowMs)))
    return b
  }

  guard(appId: string, accountId: string): RequestGuard {
    const key = `${appId}|${accountId}`
    let g = this.guards.get(key)
    if (!g) this.guards.set(key, (g = new RequestGuard(this.limitsFor(appId, accountId))))
    return g
  }

  /** For one (app, account) when both ids are given, else the defaults (applied to every existing pair too). */
  set(limits: Limits, nowMs: number, pair?: { appId: string; accountId: string }): void {
    if (pair) {
      const key = `${pair.appId}|${pair.accountId}`
      const next = validLimits({ ...this.limitsFor(pair.appId, pair.accountId), ...definedOnly(limits) })
      this.overrides.set(key, next)
      this.buckets.get(key)?.setLimits(next, nowMs)
      this.guards.get(key)?.setLimits(next)
      return
    }
    this.defaults = validLimits({ ...this.defaults, ...definedOnly(limits) })
    for (const [key, b] of this.buckets) if (!this.overrides.has(key)) b.setLimits(this.defaults, nowMs)
    for (const [key, g] of this.guards) if (!this.overrides.has(key)) g.setLimits(this.defaults)
  }
}

const definedOnly = (limits: Limits): Limits =>
  Object.fromEntries(Object.entries(limits).filter(([k, v]) => v !== undefined && k in defaultLimits)) as Limits

const validLimits = (limits: Required<Limits>): Required<Limits> => {
  for (const [name, value] of Object.entries(limits)) {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new RangeError(`limits: ${name} must be a number >= 0, got ${value}`)
  }
  if (limits.requestWindowSeconds <= 0) throw new RangeError(`limits: requestWindowSeconds must be > 0`)
  return limits
}
