import { Context, Effect, Layer, Schema } from "effect"
import { gql } from "graphql-tag"
import { webhookTopicNames } from "../api/serviceSchema.js"
import { ServiceClient } from "../api/ServiceClient.js"
import { AccessTokens } from "../auth/AccessTokens.js"
import { describeError, type StreamError } from "../sync/RunOutcome.js"
import type { AnyStream } from "../sync/streams/Stream.js"

/** The account's webhook subscriptions of this app (the service lists 100 at most: one per topic is far fewer). */
export const WebhookSubscriptionsQuery = gql`
  query WebhookSubscriptions {
    webhookSubscriptions(first: 100) {
      nodes {
        id
        topic
        url
      }
    }
  }
`

export const WebhookSubscriptionCreateMutation = gql`
  mutation WebhookSubscriptionCreate($input: WebhookSubscriptionCreateInput!) {
    webhookSubscriptionCreate(input: $input) {
      webhookSubscription {
        id
        topic
        url
      }
      userErrors {
        message
        path
      }
    }
  }
`

const Subscription = Schema.Struct({ id: Schema.String, topic: Schema.String, url: Schema.String })
const ListData = Schema.Struct({ webhookSubscriptions: Schema.NullOr(Schema.Struct({ nodes: Schema.Array(Subscription) })) })
const CreateData = Schema.Struct({
  webhookSubscriptionCreate: Schema.Struct({
    webhookSubscription: Schema.NullOr(Subscription),
    userErrors: Schema.Array(Schema.Struct({ message: Schema.String }))
  })
})

/** Every topic of the service's WebHookTopicEnum that belongs to one of the streams (JOB_CREATE, JOB_UPDATE, ...). */
export const topicsOf = (streams: ReadonlyArray<AnyStream>): ReadonlyArray<string> => {
  const prefixes = streams.flatMap((s) => (s.topic === undefined ? [] : [`${s.topic}_`]))
  return webhookTopicNames().filter((name) => prefixes.some((p) => name.startsWith(p)))
}

export interface SubscriptionResult {
  readonly topic: string
  readonly outcome: "created" | "exists" | "failed"
  readonly detail?: string
}

/** Subscribes an account to the change events of the streams, at `url` (the `/webhooks` of `serve`). */
export class Subscriptions extends Context.Tag("account-sync/Subscriptions")<
  Subscriptions,
  {
    readonly subscribe: (
      accountId: string,
      url: string,
      streams: ReadonlyArray<AnyStream>
    ) => Effect.Effect<ReadonlyArray<SubscriptionResult>, StreamError>
  }
>() {}

const decode = <A, I>(schema: Schema.Schema<A, I>, data: unknown, operation: string) =>
  Schema.decodeUnknown(schema)(data).pipe(Effect.orDieWith((e) => new Error(`${operation}: unexpected answer: ${e.message}`)))

export const SubscriptionsLive = Layer.effect(
  Subscriptions,
  Effect.gen(function* () {
    const client = yield* ServiceClient
    const tokens = yield* AccessTokens
    const subscribe = (accountId: string, url: string, streams: ReadonlyArray<AnyStream>) =>
      Effect.gen(function* () {
        const credentials = tokens.credentials(accountId)
        const listed = yield* decode(ListData, (yield* client.execute(credentials, WebhookSubscriptionsQuery)).data, "webhookSubscriptions")
        const existing = new Set((listed.webhookSubscriptions?.nodes ?? []).filter((s) => s.url === url).map((s) => s.topic))
        const results: Array<SubscriptionResult> = []
        for (const topic of topicsOf(streams)) {
          if (existing.has(topic)) {
            results.push({ topic, outcome: "exists" })
            continue
          }
          const answer = yield* client.execute(credentials, WebhookSubscriptionCreateMutation, { input: { topic, url } }).pipe(Effect.either)
          if (answer._tag === "Left") {
            const e = answer.left
            if (e._tag === "QueryFailed" || e._tag === "PermissionDenied") {
              results.push({ topic, outcome: "failed", detail: describeError(e) })
              continue
            }
            return yield* Effect.fail(e)
          }
          const created = yield* decode(CreateData, answer.right.data, "webhookSubscriptionCreate")
          const errors = created.webhookSubscriptionCreate.userErrors
          results.push(errors.length > 0 ? { topic, outcome: "failed", detail: errors.map((e) => e.message).join("; ") } : { topic, outcome: "created" })
        }
        return results
      }).pipe(Effect.annotateLogs({ accountId }))
    return Subscriptions.of({ subscribe })
  })
)
