import { describe, expect, it } from "vitest"
import * as path from "node:path"
import { framesBetween, render, runOnTerminal, untilFrameWith } from "../../support/live/terminalScreen.js"

const root = path.resolve(import.meta.dirname, "../../..")
const driver = `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(path.join(root, "test/support/live/progressDriver.ts"))}`

/** What the driver prints besides the live lines: all of it must be on the screen, in order. */
const printed = [
  "== section 1: backfill",
  ...Array.from({ length: 7 }, (_, i) => `printed line ${i}`),
  "ACCOUNT  ROWS",
  "north    300",
  "blue     200",
  "== section 2: after the run",
  "DRIVER DONE"
]

const live = (l: string) => /\d+\/\d+ rows \d+%/.test(l)

describe("the live progress display on a terminal (a pseudo-terminal rendered by a terminal emulator)", () => {
  for (const cols of [80, 100, 160]) {
    it(`at ${cols} columns: live lines never wrap, nothing printed is lost or erased, nothing stale stays`, async () => {
      const rows = 24
      const bytes = await runOnTerminal(driver, cols, rows, { ...process.env, FORCE_COLOR: "0" })
      const screen = await render(bytes, cols, rows)

      // no line was wrapped but the one log line that is long on purpose (printed output may wrap; live lines never)
      const longLog = screen.lines.findIndex((l) => l.includes("log line 3:"))
      const longLogRows = Math.ceil(`00:00:00 INFO log line 3: ${"a long log message ".repeat(12)}`.trimEnd().length / cols)
      expect(screen.wrapped, screen.lines.join("\n")).toEqual(Array.from({ length: longLogRows - 1 }, (_, i) => longLog + 1 + i))

      // every line the program printed is there, once, in order: the live region never erased one
      let at = -1
      for (const text of printed) {
        const found = screen.lines.findIndex((l, i) => i > at && l === text)
        expect(found, `"${text}" is missing or out of order:\n${screen.lines.join("\n")}`).toBeGreaterThan(at)
        expect(screen.lines.filter((l) => l === text)).toHaveLength(1)
        at = found
      }
      for (let i = 0; i <= 6; i++) expect(screen.lines.some((l) => l.includes(`INFO log line ${i}:`))).toBe(true)
      // at the end no live line is left, and the last thing printed is the last line on the screen
      expect(screen.lines.filter(live)).toEqual([])
      expect(screen.visible.slice(-2)).toEqual(["== section 2: after the run", "DRIVER DONE"])

      // while both ran: one line per account under the printed output, each within the width, the long name cut
      const whileBoth = await render(untilFrameWith(bytes, "printed line 3"), cols, rows)
      const both = whileBoth.visible.slice(-2)
      expect(both[0]).toMatch(/^Northwind Landscaping {2}jobs 2\/3 /)
      expect(both[1]).toMatch(/^Bluebird Plumbing & Heating.*… {2}jobs 2\/2 /)
      for (const line of both) expect(line.length).toBeLessThanOrEqual(cols)
      expect(whileBoth.visible.at(-3)).toBe("printed line 3")

      // once the second account's run ended, its line is gone; the first one's stays below the printed lines
      const afterOne = await render(untilFrameWith(bytes, "printed line 6"), cols, rows)
      expect(afterOne.visible.at(-1)).toMatch(/^Northwind Landscaping {2}invoices 3\/3 /)
      expect(afterOne.visible.at(-2)).toBe("printed line 6")
      expect(afterOne.visible.filter((l) => l.startsWith("Bluebird"))).toEqual([])
      // ink draws at most 30 frames a second: the line printed may be drawn above the frame before the last report,
      // and the held-back one follows; before the display is taken down, the line shows the last report's rows
      const drawn = await Promise.all(framesBetween(bytes, "printed line 6", "ACCOUNT  ROWS").map((b) => render(b, cols, rows)))
      const latest = drawn.filter((s) => s.visible.at(-2) === "printed line 6").at(-1)
      expect(latest?.visible.at(-1), drawn.map((s) => s.visible.at(-1)).join("\n")).toMatch(/^Northwind Landscaping {2}invoices 3\/3 {2}(\[#+\] {2})?300\/300 rows 100%/)
    }, 180_000)
  }
})
