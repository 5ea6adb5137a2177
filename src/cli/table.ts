/** Rows of cells as an aligned plain-text table (the first row is the header). */
export const alignedTable = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  if (rows.length === 0) return ""
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)))
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}
