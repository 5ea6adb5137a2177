import { Data } from "effect"

/** A step of a benchmark or of the chaos run could not be carried out (not a measured result: the harness itself). */
export class BenchError extends Data.TaggedError("BenchError")<{ readonly step: string; readonly reason: string }> {
  override get message() {
    return `${this.step}: ${this.reason}`
  }
}
