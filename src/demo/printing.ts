import { Console } from "effect"
import { wrap } from "../cli/output/text.js"
import { alignedTable, terminalTableWidth } from "../cli/table.js"

/** How the demo prints: its steps as headings, its sentences wrapped, and tables at the terminal's width. */

/** The demo's prose is wrapped to 100 columns, or the terminal's width when it is narrower. */
const proseWidth = () => Math.min(100, process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : 100)

/** The heading of one step of the demo. */
export const step = (title: string) => Console.log(`\n== ${wrap(title, proseWidth(), 3)}`)

/** A sentence of the demo's. */
export const say = (text: string) => Console.log(wrap(text, proseWidth(), 2))

/** A job's versions at the terminal's width: only the title is cut, never the times. */
export const versionsTable = (rows: ReadonlyArray<Record<string, unknown>>) => {
  if (rows.length === 0) return "(no versions)"
  const header = Object.keys(rows[0]!)
  return alignedTable([header, ...rows.map((r) => header.map((k) => String(r[k] ?? "")))], {
    maxWidth: terminalTableWidth(),
    shrink: [header.indexOf("title")]
  })
}
