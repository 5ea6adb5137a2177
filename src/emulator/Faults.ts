import type { Faults } from "./EmulatorAdmin.js"
import { sequence } from "./Prng.js"

/** Seeded fault draws for the GraphQL and token endpoints: one draw per request, repeatable for a given seed. */

export type FaultKind = "error" | "drop" | "truncate"

export interface FaultDraw {
  readonly kind: FaultKind | undefined
  /** Added delay before answering, 0 when none. */
  readonly latencyMs: number
  /** 502 or 503 for an `error` fault. */
  readonly status: 502 | 503
}

const rate = (name: string, value: number | undefined): number => {
  const v = value ?? 0
  if (!Number.isFinite(v) || v < 0 || v > 1) throw new RangeError(`${name} must be a probability between 0 and 1, got ${value}`)
  return v
}

export class FaultInjector {
  private faults: Faults = {}
  private next: () => number = sequence(1)

  set(faults: Faults): void {
    const total = rate("errorRate", faults.errorRate) + rate("dropRate", faults.dropRate) + rate("truncateRate", faults.truncateRate)
    rate("latencyRate", faults.latencyRate)
    if (total > 1) throw new RangeError(`errorRate + dropRate + truncateRate must not exceed 1, got ${total}`)
    if (faults.latencyMs !== undefined && !(faults.latencyMs >= 0)) throw new RangeError(`latencyMs must be >= 0, got ${faults.latencyMs}`)
    this.faults = { ...faults }
    this.next = sequence(faults.seed ?? 1)
  }

  get current(): Faults {
    return this.faults
  }

  draw(): FaultDraw {
    const f = this.faults
    const r = this.next()
    const latency = this.next() < (f.latencyRate ?? 0) ? (f.latencyMs ?? 1000) : 0
    const status = this.next() < 0.5 ? 502 : 503
    const e = f.errorRate ?? 0
    const d = e + (f.dropRate ?? 0)
    const t = d + (f.truncateRate ?? 0)
    const kind: FaultKind | undefined = r < e ? "error" : r < d ? "drop" : r < t ? "truncate" : undefined
    return { kind, latencyMs: latency, status }
  }
}
