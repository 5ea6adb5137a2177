import { cutToWidth, displayWidth, padToWidth, safe } from "./output/text.js"

/** How wide the tables of a command may be unless `--wide` is given. */
export const defaultTableWidth = 120

/** 120 columns, or the terminal's width when stdout is a narrower terminal. */
export const terminalTableWidth = () =>
  process.stdout.isTTY && process.stdout.columns > 0 ? Math.min(defaultTableWidth, process.stdout.columns) : defaultTableWidth

/** How many lines a view may print to fit a screen: the terminal's rows, or 50 when stdout is not a terminal. */
export const terminalScreenLines = () => (process.stdout.isTTY && process.stdout.rows > 0 ? process.stdout.rows : 50)

export interface TableOptions {
  /**
   * The widest a line may be. Until the table fits: the columns in `shrink` are cut (the widest first) down to a
   * comfortable width, then the columns in `optional` are left out (in that order), then the `shrink` ones are cut
   * down to their header's width.
   */
  readonly maxWidth?: number
  readonly shrink?: ReadonlyArray<number>
  readonly optional?: ReadonlyArray<number>
  /** Columns left out (in that order) before any is cut, until the table fits. */
  readonly leaveOutFirst?: ReadonlyArray<number>
  /** Columns aligned right (numbers). */
  readonly right?: ReadonlyArray<number>
}

/** A line of its own inside a table (an account's name above its rows), not part of any column. */
export interface Caption {
  readonly caption: string
}

export type TableRow = ReadonlyArray<string> | Caption

const isCaption = (row: TableRow): row is Caption => !Array.isArray(row)

const gap = 2
/** A cut column is cut to this width before any column is left out. */
const comfortable = 16

/**
 * Rows of cells as an aligned plain-text table (the first row is the header). Every cell is made safe for a
 * terminal (control characters escaped) here, so no text from outside reaches the screen raw.
 */
export const alignedTable = (rows: ReadonlyArray<TableRow>, options: TableOptions = {}): string => {
  if (rows.length === 0) return ""
  const table = rows.map((r) => (isCaption(r) ? { caption: safe(r.caption) } : r.map(safe)))
  const cells = table.filter((r): r is Array<string> => Array.isArray(r))
  const columns = cells[0]!.length
  const widths = Array.from({ length: columns }, (_, i) => Math.max(...cells.map((r) => displayWidth(r[i] ?? ""))))
  const shown = new Set(widths.keys())
  const maxWidth = options.maxWidth
  if (maxWidth !== undefined) {
    const total = () => [...shown].reduce((a, i) => a + widths[i]!, 0) + gap * (shown.size - 1)
    const headerWidth = (i: number) => displayWidth(cells[0]![i] ?? "")
    const shrinkTo = (floor: (i: number) => number) => {
      for (;;) {
        const excess = total() - maxWidth
        const widest = (options.shrink ?? []).filter((i) => shown.has(i) && widths[i]! > floor(i)).sort((a, b) => widths[b]! - widths[a]!)[0]
        if (excess <= 0 || widest === undefined) return
        widths[widest] = Math.max(floor(widest), widths[widest]! - excess)
      }
    }
    for (const i of options.leaveOutFirst ?? []) if (total() > maxWidth) shown.delete(i)
    shrinkTo((i) => Math.max(headerWidth(i), Math.min(comfortable, widths[i]!)))
    for (const i of options.optional ?? []) if (total() > maxWidth) shown.delete(i)
    shrinkTo(headerWidth)
  }
  const right = new Set(options.right ?? [])
  return table
    .map((r) =>
      Array.isArray(r)
        ? r
            .flatMap((cell, i) => (shown.has(i) ? [padToWidth(cutToWidth(cell, widths[i]!), widths[i]!, right.has(i) ? "right" : "left")] : []))
            .join(" ".repeat(gap))
            .trimEnd()
        : maxWidth === undefined
          ? r.caption
          : cutToWidth(r.caption, maxWidth)
    )
    .join("\n")
}
