import { describe, expect, it } from "vitest"
import { type BoundShares, decideBound } from "../../../bench/lib/scaleBound.js"

const idle: BoundShares = { workersCpu: 0.1, machineCpu: 0.3, emulatorCpu: 0.1, bucketWait: 0, permitWait: 0, permitsFull: 0, queueWait: 0, postgres: 0 }

describe("the scale bench's bound, decided from measured shares", () => {
  it("is the bucket at the ceiling, whatever else was measured", () => {
    expect(decideBound(0.93, { ...idle, queueWait: 0.8, machineCpu: 1 })).toBe("bucket")
  })

  it("is slots when the accounts waited mostly for a worker whose permits were not all busy, even on a saturated machine", () => {
    expect(decideBound(0.1, { ...idle, machineCpu: 1, bucketWait: 0.27, queueWait: 0.72 })).toBe("slots")
    // every permit held most of the time on a saturated machine: the worker took no more accounts because its CPU was busy
    expect(decideBound(0.1, { ...idle, machineCpu: 1, bucketWait: 0.24, permitsFull: 0.8, queueWait: 0.67 })).toBe("cpu")
  })

  it("is cpu when the accounts waited mostly for a permit while the machine's CPU was saturated, slots when it was not", () => {
    expect(decideBound(0.5, { ...idle, machineCpu: 0.97, permitWait: 0.6, bucketWait: 0.3 })).toBe("cpu")
    expect(decideBound(0.5, { ...idle, machineCpu: 0.4, permitWait: 0.6, bucketWait: 0.3 })).toBe("slots")
  })

  it("is cpu when the accounts began while a worker's event loop or the machine was saturated, before any wait", () => {
    const began = { seconds: 18, machine: 0.6, workers: 1.05, workerMainThread: 0.95, workerMainThreadWaiting: 0 }
    expect(decideBound(0.75, { ...idle, bucketWait: 0.8 })).toBe("bucket")
    expect(decideBound(0.75, { ...idle, bucketWait: 0.8 }, began)).toBe("cpu")
    // on a CPU 0.7 of the time and waiting for one 0.25: the event loop had work all along
    expect(decideBound(0.75, { ...idle, bucketWait: 0.8 }, { ...began, workerMainThread: 0.7, workerMainThreadWaiting: 0.25 })).toBe("cpu")
    expect(decideBound(0.75, { ...idle, bucketWait: 0.8 }, { ...began, workerMainThread: 0.5, machine: 0.95 })).toBe("cpu")
    expect(decideBound(0.75, { ...idle, bucketWait: 0.8 }, { ...began, workerMainThread: 0.5, workerMainThreadWaiting: 0.1 })).toBe("bucket")
    expect(decideBound(0.93, idle, began)).toBe("bucket")
  })

  it("is postgres when statements took the largest share, else cpu, the emulator or other by saturation", () => {
    expect(decideBound(0.5, { ...idle, postgres: 0.5, bucketWait: 0.3 })).toBe("postgres")
    expect(decideBound(0.5, { ...idle, machineCpu: 0.95, bucketWait: 0.2 })).toBe("cpu")
    expect(decideBound(0.5, { ...idle, emulatorCpu: 0.95, bucketWait: 0.2 })).toBe("emulator")
    expect(decideBound(0.5, { ...idle, bucketWait: 0.2 })).toBe("other")
  })
})
