/** Deterministic hashing and a small seeded PRNG: the emulator's data and fault draws are repeatable per seed. */

/** A well-mixed 32-bit hash of (seed, index, salt); the same inputs always give the same value. */
export const hash32 = (seed: number, index: number, salt: number): number => {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 0x7f4a7c15, 0xc2b2ae35) ^ Math.imul(salt + 0x165667b1, 0x27d4eb2f)
  h ^= h >>> 16
  h = Math.imul(h, 0x7feb352d)
  h ^= h >>> 15
  h = Math.imul(h, 0x846ca68b)
  h ^= h >>> 16
  return h >>> 0
}

/** A uniform float in [0, 1) from (seed, index, salt). */
export const unit = (seed: number, index: number, salt: number): number => hash32(seed, index, salt) / 4294967296

/** An element of `items` chosen by (seed, index, salt). */
export const pick = <A>(items: ReadonlyArray<A>, seed: number, index: number, salt: number): A =>
  items[hash32(seed, index, salt) % items.length]!

/** mulberry32: a sequential PRNG for draws whose order matters (faults, edits). */
export const sequence = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
