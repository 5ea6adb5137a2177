import { describe, expect, it } from "vitest"
import * as path from "node:path"
import { render, runOnTerminal, untilFrameWith } from "../../support/live/terminalScreen.js"

const root = path.resolve(import.meta.dirname, "../../..")
const driver = `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(path.join(root, "test/support/live/accountEtaDriver.ts"))}`

describe("the live display's time left for the account (a pseudo-terminal rendered by a terminal emulator)", () => {
  it("at 80 columns: the account's time left beside the stream's; a stream's first estimate from the cost measured so far", async () => {
    const cols = 80
    const rows = 24
    const bytes = await runOnTerminal(driver, cols, rows, { ...process.env, FORCE_COLOR: "0" })
    const lineAfter = async (marker: string) => {
      const screen = await render(untilFrameWith(bytes, marker), cols, rows)
      const line = screen.visible.at(-1)!
      expect(line.length).toBeLessThanOrEqual(cols)
      expect(screen.wrapped).toEqual([])
      return line
    }
    // before anything is measured: the requested cost
    expect(await lineAfter("STEP first stream started")).toMatch(/ users 1\/3 .* 0\/100 rows 0% {2}1 min 12 s left {2}account 7 min 12 s left/)
    // the account's rest: jobs' 100 rows, then visits' 300, at the 90 points a row measured
    expect(await lineAfter("STEP second stream half done")).toMatch(/ jobs 2\/3 .* 100\/200 rows 50% {2}18 s left {2}account 1 min 12 s left/)
    // the last stream: no account part; its first estimate from the measured cost
    const last = await lineAfter("STEP third stream started")
    expect(last).toMatch(/ visits 3\/3 .* 0\/300 rows 0% {2}54 s left/)
    expect(last).not.toContain("account")
  }, 180_000)
})
