import { Data } from "effect"

/** A statement `query` does not run, and why. */
export class QueryRefused extends Data.TaggedError("QueryRefused")<{ readonly reason: string }> {
  override get message() {
    return `query refused: ${this.reason} (query runs exactly one read-only statement: ${allowedList})`
  }
}

/** The statements that only read (a data-modifying WITH or SELECT INTO is stopped by the read-only transaction). */
const allowed = ["select", "with", "values", "table", "show", "explain"] as const
const allowedList = "SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN"

const transactionControl = new Set(["begin", "start", "commit", "end", "rollback", "abort", "savepoint", "release", "prepare"])
const sessionSettings = new Set(["set", "reset", "discard", "load"])

/** The text after leading white space, comments (`-- ...`, nested `/* ... *\/`) and opening parentheses. */
const skipLeading = (text: string): string => {
  let rest = text
  for (;;) {
    const trimmed = rest.replace(/^[\s(]+/, "")
    if (trimmed.startsWith("--")) {
      const end = trimmed.indexOf("\n")
      rest = end < 0 ? "" : trimmed.slice(end + 1)
    } else if (trimmed.startsWith("/*")) {
      let depth = 0
      let i = 0
      for (; i < trimmed.length; i++) {
        if (trimmed.startsWith("/*", i)) {
          depth++
          i++
        } else if (trimmed.startsWith("*/", i)) {
          depth--
          i++
          if (depth === 0) break
        }
      }
      rest = trimmed.slice(i + 1)
    } else {
      return trimmed
    }
  }
}

/**
 * Why `statement` is refused before it reaches the database, or undefined when its first keyword is one that only
 * reads. Only the first keyword is looked at: that the text is one statement is the extended protocol's to enforce
 * (it refuses a second one), and that it changes nothing is the read-only transaction's and the role's.
 */
export const refusalOf = (statement: string): QueryRefused | undefined => {
  const rest = skipLeading(statement)
  if (rest === "" || rest.startsWith(";")) return new QueryRefused({ reason: "no statement given" })
  const keyword = /^[A-Za-z_]+/.exec(rest)?.[0]?.toLowerCase()
  if (keyword !== undefined && (allowed as ReadonlyArray<string>).includes(keyword)) return undefined
  const shown = keyword?.toUpperCase() ?? JSON.stringify(rest.slice(0, 20))
  if (keyword !== undefined && transactionControl.has(keyword)) return new QueryRefused({ reason: `${shown} is transaction control` })
  if (keyword !== undefined && sessionSettings.has(keyword)) return new QueryRefused({ reason: `${shown} changes the session` })
  if (keyword === "copy") return new QueryRefused({ reason: "COPY reads and writes files and runs programs on the server" })
  return new QueryRefused({ reason: `${shown} is not a read-only statement` })
}
