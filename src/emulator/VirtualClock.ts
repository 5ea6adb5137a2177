/**
 * The emulator's time: the host clock (Effect's `Clock`, read when the emulator starts) plus an offset that only
 * `advance` moves. Codes, tokens, buckets and the request guard all read it, so tests skip minutes without sleeping.
 */
export class VirtualClock {
  private offsetMs = 0
  constructor(private readonly hostNowMs: () => number) {}

  nowMs(): number {
    return this.hostNowMs() + this.offsetMs
  }

  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000)
  }

  advance(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`advanceClock: seconds must be a finite number >= 0, got ${seconds}`)
    this.offsetMs += seconds * 1000
  }

  get offsetSeconds(): number {
    return this.offsetMs / 1000
  }
}
