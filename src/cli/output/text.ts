import stringWidth from "string-width"
import { printable } from "../../observability/printable.js"

/** Text from anywhere made safe for a terminal (control characters shown escaped), never cut. */
export const safe = (text: string): string => printable(text, Number.POSITIVE_INFINITY)

/** Columns the text takes on a terminal (wide characters count two, combining marks none). */
export const displayWidth = (text: string): number => stringWidth(text)

const segmenter = new Intl.Segmenter()

/** The text cut to at most `width` columns, ending in `…` when something was cut. */
export const cutToWidth = (text: string, width: number): string => {
  if (displayWidth(text) <= width) return text
  if (width <= 0) return ""
  let out = ""
  let used = 0
  for (const { segment } of segmenter.segment(text)) {
    const w = displayWidth(segment)
    if (used + w > width - 1) break
    out += segment
    used += w
  }
  return `${out}…`
}

/** Pads to `width` columns (by display width). */
export const padToWidth = (text: string, width: number, align: "left" | "right" = "left"): string => {
  const gap = " ".repeat(Math.max(0, width - displayWidth(text)))
  return align === "left" ? text + gap : gap + text
}

/** 12345 -> "12,345". */
export const count = (n: number): string => Math.round(n).toLocaleString("en-US")

/** Words wrapped to `width`, each line after the first indented by `indent`. */
export const wrap = (text: string, width: number, indent: number): string => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w.length > 0)) {
    if (line.length > 0 && indent + line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line.length === 0 ? word : `${line} ${word}`
  }
  if (line.length > 0) lines.push(line)
  return lines.join(`\n${" ".repeat(indent)}`)
}
