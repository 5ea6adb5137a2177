/** Counts over positions 0..n-1 with prefix sums and the k-th marked position in O(log n) (a binary indexed tree). */
export class Fenwick {
  private tree: Int32Array

  constructor(private n: number) {
    this.tree = new Int32Array(n + 1)
  }

  get size(): number {
    return this.n
  }

  /** Grows to hold `n` positions (new positions count 0). */
  grow(n: number): void {
    if (n <= this.n) return
    const values = new Int32Array(n)
    for (let i = 0; i < this.n; i++) values[i] = this.at(i)
    this.n = n
    this.tree = new Int32Array(n + 1)
    for (let i = 0; i < n; i++) if (values[i] !== 0) this.add(i, values[i]!)
  }

  add(position: number, delta: number): void {
    for (let i = position + 1; i <= this.n; i += i & -i) this.tree[i]! += delta
  }

  /** The sum over positions [0, end). */
  prefix(end: number): number {
    let s = 0
    for (let i = Math.min(end, this.n); i > 0; i -= i & -i) s += this.tree[i]!
    return s
  }

  at(position: number): number {
    return this.prefix(position + 1) - this.prefix(position)
  }
}

/**
 * Positions of an order with some of them gone: the k-th remaining one from a start, and how many remain before a
 * position, in O(log^2 n). What makes `offset` cost the same at the millionth row as at the first.
 */
export class Remaining {
  private readonly gone: Fenwick

  constructor(size: number) {
    this.gone = new Fenwick(size)
  }

  grow(size: number): void {
    this.gone.grow(size)
  }

  remove(position: number): void {
    if (this.gone.at(position) === 0) this.gone.add(position, 1)
  }

  /** Remaining positions in [lo, hi). */
  count(lo: number, hi: number): number {
    return hi <= lo ? 0 : hi - lo - (this.gone.prefix(hi) - this.gone.prefix(lo))
  }

  /** The k-th (0-based) remaining position at or after `lo` and before `hi`, or -1. */
  kth(lo: number, hi: number, k: number): number {
    if (k < 0 || k >= this.count(lo, hi)) return -1
    let a = lo
    let b = hi - 1
    while (a < b) {
      const mid = (a + b) >> 1
      if (this.count(lo, mid + 1) > k) b = mid
      else a = mid + 1
    }
    return a
  }
}
