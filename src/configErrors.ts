import { type ConfigError, LogLevel } from "effect"
import { printable } from "./observability/printable.js"

/** Where every key is documented, and where a person sets it. */
const whereToSet = "put it in .env (see config/.env.example)"

const keyPattern = /^([A-Z][A-Z0-9_]*): /

/** Effect's own wording of a bad value, said in terms of the key's expected form. */
const plainDetail = (detail: string): string => {
  const received = /but received (.*)$/.exec(detail)?.[1]
  const got = received === undefined ? "" : `, got ${printable(received, 80)}`
  if (detail.startsWith("Expected a duration")) return `expected a duration such as "30 seconds", "6 hours" or "1 day"${got}`
  if (detail.startsWith("Expected a log level")) return `expected one of ${LogLevel.allLevels.map((l) => l.label.toLowerCase()).join(", ")}${got}`
  if (detail.startsWith("Expected an integer")) return `expected a whole number${got}`
  if (detail.startsWith("Expected a number")) return `expected a number${got}`
  if (detail.startsWith("Expected a boolean")) return `expected true or false${got}`
  if (detail.startsWith("Expected a network port")) return `expected a port number from 1 to 65535${got}`
  if (detail.startsWith("Expected one of")) return detail.replace(/^Expected/, "expected").replace(" but received", ", got")
  return detail
}

/** Effect's message for a key that is absent, or one that only says the value is redacted: no help to a person. */
const saysNothing = (message: string) => /^Expected .* to exist in the (process context|provided map)$/.test(message) || message.includes("<redacted>") || message === "Expected a non-empty string"

/**
 * A ConfigError as one line per problem, each naming the key, what is wrong and where to set it:
 * `SERVICE_BASE_URL is not set: put it in .env (see config/.env.example)`,
 * `SYNC_FULL_PASS_EVERY is invalid (in .env or the environment): expected a duration such as ..., got "daily"`.
 * A hint is never redacted (secrets are kept out of messages where they are made, not here).
 */
export const formatConfigError = (error: ConfigError.ConfigError): string => {
  const lines: Array<string> = []
  const walk = (e: ConfigError.ConfigError): void => {
    switch (e._op) {
      case "And":
      case "Or":
        walk(e.left)
        walk(e.right)
        return
      case "MissingData": {
        const key = e.path.join(".") || (keyPattern.exec(e.message)?.[1] ?? "a setting")
        const detail = e.message.replace(keyPattern, "")
        lines.push(
          e.message === "Expected a non-empty string"
            ? `${key} is empty: ${whereToSet}`
            : saysNothing(detail)
              ? `${key} is not set: ${whereToSet}`
              : `${key} is not set: ${detail}`
        )
        return
      }
      case "InvalidData":
      case "SourceUnavailable":
      case "Unsupported": {
        const key = e.path.join(".") || keyPattern.exec(e.message)?.[1]
        const detail = plainDetail(e.message.replace(keyPattern, "").replace(new RegExp(`^${key}: `), ""))
        lines.push(key === undefined ? `configuration is invalid: ${detail}` : `${key} is invalid (in .env or the environment): ${detail}`)
        return
      }
    }
  }
  walk(error)
  return [...new Set(lines)].join("\n")
}
