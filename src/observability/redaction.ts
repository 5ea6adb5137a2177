import type { Attributes, AttributeValue } from "@opentelemetry/api"
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base"

/** Query parameters whose values are secrets, or bind a flow to its browser: never exported. */
export const sensitiveParams = ["code", "state", "code_verifier", "access_token", "refresh_token", "id_token", "client_secret", "token"]

/** Headers whose values authenticate (the webhook signature among them): never exported. */
export const sensitiveHeaders = ["x-service-hmac-sha256", "authorization", "cookie", "set-cookie", "proxy-authorization"]

export const redacted = "REDACTED"

const paramPattern = new RegExp(`(^|[?&#])(${sensitiveParams.join("|")})=[^&#\\s"'<>]*`, "gi")
const headerKey = new RegExp(`^http\\.(request|response)\\.header\\.(${sensitiveHeaders.join("|")})$`, "i")

/** `text` with every sensitive query parameter's value replaced (`...?code=REDACTED&state=REDACTED`). */
export const redactParams = (text: string): string => text.replace(paramPattern, (_, lead: string, name: string) => `${lead}${name}=${redacted}`)

const redactValue = (key: string, value: AttributeValue | undefined): AttributeValue | undefined => {
  if (value === undefined) return value
  if (headerKey.test(key)) return redacted
  if (typeof value === "string") return redactParams(value)
  if (Array.isArray(value)) return value.map((v) => (typeof v === "string" ? redactParams(v) : v)) as AttributeValue
  return value
}

/** Span or event attributes with sensitive headers and query parameters redacted. */
export const redactAttributes = (attributes: Attributes): Attributes => {
  const out: Attributes = {}
  for (const [key, value] of Object.entries(attributes)) out[key] = redactValue(key, value)
  return out
}

/** The span as it is exported: its attributes, its events' and its name redacted; everything else as it was. */
export const redactSpan = (span: ReadableSpan): ReadableSpan => ({
  name: redactParams(span.name),
  kind: span.kind,
  spanContext: () => span.spanContext(),
  ...(span.parentSpanContext ? { parentSpanContext: span.parentSpanContext } : {}),
  startTime: span.startTime,
  endTime: span.endTime,
  status: span.status.message === undefined ? span.status : { ...span.status, message: redactParams(span.status.message) },
  attributes: redactAttributes(span.attributes),
  links: span.links,
  events: span.events.map((e) => ({ ...e, name: redactParams(e.name), ...(e.attributes ? { attributes: redactAttributes(e.attributes) } : {}) })),
  duration: span.duration,
  ended: span.ended,
  resource: span.resource,
  instrumentationScope: span.instrumentationScope,
  droppedAttributesCount: span.droppedAttributesCount,
  droppedEventsCount: span.droppedEventsCount,
  droppedLinksCount: span.droppedLinksCount
})

/**
 * Wraps an exporter so that no span leaves the process with an OAuth code or state, a token, or the webhook
 * signature in it: @effect/platform's HTTP spans record the full URL (`url.full`, `url.query`), every request
 * header and the response's Location, and those carry them.
 */
export const redactingExporter = (inner: SpanExporter): SpanExporter => ({
  export: (spans, done) => inner.export(spans.map(redactSpan), done),
  shutdown: () => inner.shutdown(),
  forceFlush: () => inner.forceFlush?.() ?? Promise.resolve()
})
