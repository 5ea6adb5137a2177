/** The ids a pass landed most recently, in list order: the rows a page may join on. Bounded. */
export class RecentIds {
  /** The ids in the order added, as a ring: the oldest is overwritten by the newest (no array shifted per id). */
  private readonly ring: Array<string> = []
  private next = 0
  private readonly set = new Set<string>()

  constructor(
    private readonly capacity: number,
    initial: ReadonlyArray<string> = []
  ) {
    this.add(initial)
  }

  add(ids: ReadonlyArray<string>): void {
    if (this.capacity <= 0) return
    for (const id of ids) {
      if (this.set.has(id)) continue
      if (this.ring.length === this.capacity) this.set.delete(this.ring[this.next]!)
      this.ring[this.next] = id
      this.next = (this.next + 1) % this.capacity
      this.set.add(id)
    }
  }

  has(id: string): boolean {
    return this.set.has(id)
  }

  /** The most recent ones, oldest first: what a checkpoint keeps for a resumed pass. */
  last(n: number): ReadonlyArray<string> {
    const k = Math.max(0, Math.min(n, this.ring.length))
    const out: Array<string> = []
    for (let i = k; i > 0; i--) out.push(this.ring[(this.next - i + this.ring.length) % this.ring.length]!)
    return out
  }

  get size(): number {
    return this.ring.length
  }
}
