/** C0 and C1 control characters, DEL, and the invisible characters that reorder or break lines on a terminal. */
const unsafe = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g

/**
 * Text that came from outside (a visitor's query string, the service's `error_description`) made safe to print on
 * a terminal or in a log line: every control character (ESC sequences, CR, NUL, ...) and bidi override is shown
 * escaped as `\uXXXX` instead of acting, and it is cut at `max` characters.
 */
export const printable = (text: string, max: number = 300): string => {
  const cut = text.length > max ? `${text.slice(0, max)}...` : text
  return cut.replace(unsafe, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
}
