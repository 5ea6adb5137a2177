import { HttpClient, type HttpClientError, HttpClientRequest } from "@effect/platform"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Config, ConfigError, Context, Data, Duration, Effect, Either, Layer, Option, Redacted, Schedule, Schema } from "effect"
import { rowsOrDie } from "../db/rows.js"
import { Health } from "./Health.js"
import { type AlertCondition, conditionsOf, webhookPayload } from "./alertConditions.js"

/** ALERT_WEBHOOK_URL (a secret: a Slack webhook URL is its own credential), its time limit, and serve's check interval. */
export const AlertWebhookConfig = Config.all({
  url: Config.option(
    Config.redacted("ALERT_WEBHOOK_URL").pipe(
      Config.mapOrFail((url) => {
        try {
          const u = new URL(Redacted.value(url))
          if (u.protocol === "http:" || u.protocol === "https:") return Either.right(url)
        } catch {}
        return Either.left(ConfigError.InvalidData([], "ALERT_WEBHOOK_URL: expected an absolute http(s) URL (e.g. a Slack incoming webhook)"))
      })
    )
  ),
  timeout: Config.duration("ALERT_WEBHOOK_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10))),
  checkEvery: Config.duration("ALERT_CHECK_EVERY").pipe(Config.withDefault(Duration.minutes(5)))
})

/** The webhook did not take the message (after the retries, where a retry could help). */
export class AlertNotDelivered extends Data.TaggedError("AlertNotDelivered")<{ readonly reason: string; readonly retryable: boolean }> {
  override get message() {
    return `the alert webhook did not take the message: ${this.reason}`
  }
}

/** Network failures, timeouts, 429 and 5xx: 4 attempts in all, exponential from 500 ms, jittered. */
export const alertRetry = Schedule.exponential("500 millis").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(3)))

/** A condition sent but not acknowledged is tried again after this long (another process may be sending it). */
const resendAfterMs = 5 * 60_000

/** The failure in one line, without the request's URL (it is the secret). */
const describeHttpError = (e: HttpClientError.HttpClientError): string => {
  const cause = e.cause instanceof Error ? ((e.cause as NodeJS.ErrnoException).code ?? e.cause.name) : undefined
  return [e._tag, e.reason, cause].filter(Boolean).join(": ")
}

const Claimed = Schema.Struct({ account_id: Schema.String, condition: Schema.String, detail: Schema.String })

export class Alerts extends Context.Tag("account-sync/Alerts")<
  Alerts,
  {
    /**
     * Evaluates the conditions now and sends the newly raised ones in one message (nothing without ALERT_WEBHOOK_URL).
     * A condition is sent once while it holds, again after it cleared; one not delivered is sent by a later check.
     * Never fails: a failure is logged.
     */
    readonly check: Effect.Effect<void>
    /** serve: a check every ALERT_CHECK_EVERY, for as long as it runs (nothing without ALERT_WEBHOOK_URL). */
    readonly watch: Effect.Effect<void>
  }
>() {}

export const AlertsLive = Layer.effect(
  Alerts,
  Effect.gen(function* () {
    const settings = yield* AlertWebhookConfig
    const health = yield* Health
    const sql = yield* SqlClient.SqlClient
    // no span for the call (its URL, the secret, would be an attribute) and no trace headers sent to a third party
    const http = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true), HttpClient.withTracerPropagation(false))

    const claim = SqlSchema.findAll({
      Request: Schema.Struct({ now: Schema.DateFromSelf, before: Schema.DateFromSelf }),
      Result: Claimed,
      execute: ({ now, before }) => sql`
        UPDATE alert_notices SET attempted_at = ${now}
        WHERE notified_at IS NULL AND (attempted_at IS NULL OR attempted_at < ${before})
        RETURNING account_id, condition, detail`
    })

    /** The conditions that hold now are kept (new ones added), the cleared ones forgotten; returns those to send. */
    const raise = (conditions: ReadonlyArray<AlertCondition>, now: Date) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const accounts = conditions.map((c) => c.accountId)
          const keys = conditions.map((c) => c.condition)
          yield* sql`
            DELETE FROM alert_notices
            WHERE (account_id, condition) NOT IN (SELECT * FROM unnest(${accounts}::text[], ${keys}::text[]))`
          yield* sql`
            INSERT INTO alert_notices (account_id, condition, detail, raised_at)
            SELECT a, c, d, ${now} FROM unnest(${accounts}::text[], ${keys}::text[], ${conditions.map((c) => c.text)}::text[]) AS t(a, c, d)
            ON CONFLICT (account_id, condition) DO NOTHING`
          return yield* rowsOrDie(claim({ now, before: new Date(now.getTime() - resendAfterMs) }))
        })
      )

    const post = (url: Redacted.Redacted<string>, body: { readonly text: string }) =>
      Effect.gen(function* () {
        const request = HttpClientRequest.post(Redacted.value(url)).pipe(HttpClientRequest.bodyUnsafeJson(body))
        const response = yield* http.execute(request).pipe(Effect.mapError((e) => new AlertNotDelivered({ reason: describeHttpError(e), retryable: true })))
        if (response.status >= 200 && response.status < 300) return
        return yield* new AlertNotDelivered({ reason: `HTTP ${response.status}`, retryable: response.status === 429 || response.status >= 500 })
      }).pipe(
        Effect.scoped,
        Effect.timeoutFail({
          duration: settings.timeout,
          onTimeout: () => new AlertNotDelivered({ reason: `no answer within ${Duration.format(settings.timeout)}`, retryable: true })
        }),
        Effect.retry({ schedule: alertRetry, while: (e) => e.retryable })
      )

    const checkWith = (url: Redacted.Redacted<string>) =>
      Effect.gen(function* () {
        const snapshot = yield* health.snapshot
        const now = new Date(yield* Clock.currentTimeMillis)
        const due = yield* raise(conditionsOf(snapshot), now)
        if (due.length === 0) return
        yield* post(url, webhookPayload(due.map((d) => ({ text: d.detail }))))
        yield* sql`
          UPDATE alert_notices SET notified_at = ${now}
          WHERE (account_id, condition) IN (SELECT * FROM unnest(${due.map((d) => d.account_id)}::text[], ${due.map((d) => d.condition)}::text[]))`
        yield* Effect.logInfo(`sent ${due.length} alert(s) to ALERT_WEBHOOK_URL`)
      }).pipe(
        Effect.catchAll((e) => Effect.logWarning("alerts not sent (tried again by the next check)", e)),
        Effect.withSpan("alerts.check")
      )

    return Alerts.of(
      Option.match(settings.url, {
        onNone: () => ({ check: Effect.void, watch: Effect.void }),
        onSome: (url) => ({
          check: checkWith(url),
          watch: Effect.asVoid(Effect.repeat(checkWith(url), Schedule.spaced(settings.checkEvery)))
        })
      })
    )
  })
)
