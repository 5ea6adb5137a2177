/**
 * Postgres `text` and `jsonb` cannot hold NUL (U+0000), and `jsonb` refuses lone UTF-16 surrogates. Rather than
 * lose a row over them:
 * - mapped columns get U+FFFD (the Unicode replacement character) for each NUL and each lone surrogate;
 * - `raw` spells a NUL as the six characters `\u0000` (a lone surrogate becomes U+FFFD), so what was sent
 *   stays readable.
 */
const NUL = /\u0000/g
// String.prototype.isWellFormed / toWellFormed (ES2024): lone surrogates -> U+FFFD
type WellFormedString = string & { isWellFormed(): boolean; toWellFormed(): string }
const wellFormed = (s: string) => ((s as WellFormedString).isWellFormed() ? s : (s as WellFormedString).toWellFormed())
const storable = (s: string) => !s.includes("\u0000") && (s as WellFormedString).isWellFormed()

export const sanitizeText = (s: string): string => (storable(s) ? s : wellFormed(s.replace(NUL, "\uFFFD")))

const sanitizeRawString = (s: string): string => (storable(s) ? s : wellFormed(s.replace(NUL, "\\u0000")))

/** Whether every string in a JSON value (keys included) is storable as it is: the common case, no copy needed. */
const allStorable = (value: unknown): boolean => {
  if (typeof value === "string") return storable(value)
  if (Array.isArray(value)) return value.every(allStorable)
  if (value !== null && typeof value === "object") {
    for (const key in value) if (!storable(key) || !allStorable((value as Record<string, unknown>)[key])) return false
  }
  return true
}

/** The JSON value with every string (keys included) made storable in jsonb: itself when it already is, else a copy. */
export const sanitizeJson = (value: unknown): unknown => (allStorable(value) ? value : sanitizeCopy(value))

const sanitizeCopy = (value: unknown): unknown => {
  if (typeof value === "string") return sanitizeRawString(value)
  if (Array.isArray(value)) return value.map(sanitizeCopy)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[sanitizeRawString(k)] = sanitizeCopy(v)
    return out
  }
  return value
}

/** The JSON value with every string (keys included) made storable in a text column (U+FFFD): itself when it already is. */
export const sanitizeJsonForColumns = (value: unknown): unknown => (allStorable(value) ? value : columnCopy(value))

const columnCopy = (value: unknown): unknown => {
  if (typeof value === "string") return sanitizeText(value)
  if (Array.isArray(value)) return value.map(columnCopy)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[sanitizeText(k)] = columnCopy(v)
    return out
  }
  return value
}
