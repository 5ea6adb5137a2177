import { describe, expect, it } from "vitest"
import { releaseBytes } from "../../../src/sync/landing/releaseBytes.js"

describe("releaseBytes: bytes that will not be read again give their memory back at once", () => {
  it("a buffer that owns its whole ArrayBuffer is detached: its memory leaves the process's array buffers now, not at a collection", () => {
    const body = Buffer.concat([Buffer.alloc(600_000, 1), Buffer.alloc(600_000, 2)])
    const before = process.memoryUsage().arrayBuffers
    releaseBytes(body)
    expect(body.length).toBe(0)
    expect(body.buffer.byteLength).toBe(0)
    expect(before - process.memoryUsage().arrayBuffers).toBeGreaterThanOrEqual(1_200_000)
  })

  it("a small Buffer, a slice of Node's shared pool, is left alone: the pool, and the other Buffers in it, keep their bytes", () => {
    const small = Buffer.from("a small page body")
    const pool = small.buffer
    expect(small.byteLength).toBeLessThan(pool.byteLength)
    releaseBytes(small)
    expect(small.toString()).toBe("a small page body")
    expect(pool.byteLength).toBeGreaterThan(small.byteLength)
  })

  it("a view of part of a larger buffer is left alone, and releasing twice or an empty buffer is harmless", () => {
    const whole = Buffer.alloc(100_000, 7)
    const part = whole.subarray(10, 5_000)
    releaseBytes(part)
    expect(whole.length).toBe(100_000)
    expect(part[0]).toBe(7)
    releaseBytes(whole)
    releaseBytes(whole)
    releaseBytes(new Uint8Array(0))
    expect(whole.length).toBe(0)
  })
})
