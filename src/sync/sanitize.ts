/**
 * Postgres `text` and `jsonb` cannot hold NUL (U+0000), and `jsonb` refuses lone UTF-16 surrogates. Rather than
 * lose a row over them:
 * - mapped columns get U+FFFD (the Unicode replacement character) for each NUL and each lone surrogate;
 * - `raw` spells a NUL as the six characters `\u0000` (a lone surrogate becomes U+FFFD), so what was sent
 *   stays readable.
 */
const NUL = /\u0000/g
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
const wellFormed = (s: string) => s.replace(loneSurrogate, "\uFFFD")

export const sanitizeText = (s: string): string => wellFormed(s.replace(NUL, "\uFFFD"))

const sanitizeRawString = (s: string): string => wellFormed(s.replace(NUL, "\\u0000"))

/** A deep copy of a JSON value with every string (keys included) made storable in jsonb. */
export const sanitizeJson = (value: unknown): unknown => {
  if (typeof value === "string") return sanitizeRawString(value)
  if (Array.isArray(value)) return value.map(sanitizeJson)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[sanitizeRawString(k)] = sanitizeJson(v)
    return out
  }
  return value
}
