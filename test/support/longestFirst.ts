import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * The files that run several processes for a minute or more (workers killed or hung, the bench and chaos smokes,
 * the demo) go first. Vitest's own order puts the longest first only once its cache has their durations; on a clean
 * checkout (CI) it orders by file size, and these files are small, so they started last and the run waited for them
 * at its end (r2: chaos began at 480 s of 660, the embedded demo at 508 s).
 */
const longFirst: ReadonlyArray<RegExp> = [/\/test\/e2e\/(bench|demo|jobs)\//, /\/test\/e2e\//, /\/test\/integration\//]

const rank = (file: TestSpecification) => {
  const i = longFirst.findIndex((pattern) => pattern.test(file.moduleId))
  return i < 0 ? longFirst.length : i
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const byVitest = await super.sort(files)
    // Array.prototype.sort is stable: within a rank, vitest's order (cached durations, else file size)
    return byVitest.sort((a, b) => rank(a) - rank(b))
  }
}
