import { Effect, Option } from "effect"
import { AccountQuery, AppDisconnectMutation } from "../api/documents.js"
import type { SentDocument } from "../api/schemaCheck.js"
import { topicsOf, WebhookSubscriptionCreateMutation, WebhookSubscriptionsQuery } from "../changes/Subscriptions.js"
import { mergeVariables, type Variables } from "../sync/model.js"
import type { RefetchReader } from "../sync/pass/Refetch.js"
import type { AnyStream, Paging } from "../sync/streams/Stream.js"

/**
 * Every GraphQL document the program sends, each with the variables it is sent with: the account query, the
 * mutations, the webhook subscription calls, and per stream its page, ids, count and follow-up queries under every
 * set of variables a pass, a lookup or a change event's re-read builds (`account-sync schema check` and the
 * documents test go through this list, so a new query the program sends is checked by both once it is here).
 */

const pagings: ReadonlyArray<Paging> = ["offset", "after"]

/** Ids and times the variables are built with: only their form matters to a schema. */
const sampleId = "Z2lkOi8vc2VydmljZS9Kb2IvMQ=="
const sampleTime = new Date(Date.UTC(2025, 0, 1))

type Purposed = { readonly purpose: string; readonly values: Variables }

/** The variables a stream's re-read of changed records sends (its Refetch asked with one record). */
const refetchVariables = (stream: AnyStream): ReadonlyArray<Variables> => {
  if (stream.refetch === undefined) return []
  const asked: Array<Variables> = []
  const reader: RefetchReader<never> = {
    pages: (variables) => Effect.sync(() => void asked.push(variables)).pipe(Effect.as([])),
    count: () => Effect.succeed({ total: 0, costPoints: 0 }),
    stored: (ids) => Effect.succeed(new Map(ids.map((id) => [id, sampleId])))
  }
  Effect.runSync(stream.refetch.read([{ id: sampleId, occurredAt: sampleTime }], reader))
  return asked
}

/** Each set with every partition of the stream's list (the pager pages each in turn). */
const partitioned = (stream: AnyStream, bases: ReadonlyArray<Purposed>): ReadonlyArray<Purposed> =>
  bases.flatMap((b) =>
    stream.partitions.map((partition, i) => ({
      purpose: stream.partitions.length > 1 ? `${b.purpose}, partition ${i + 1}` : b.purpose,
      values: mergeVariables(b.values, partition)
    }))
  )

/** The variables a stream's queries start from: its full pass, and the others (incremental pass, lookups, re-reads). */
const streamVariables = (stream: AnyStream) => {
  const incremental = Option.map(stream.incremental.plan(sampleTime), (pass) => pass.variables)
  const full = partitioned(stream, [{ purpose: `${stream.name}: full pass`, values: stream.fullPass }])
  const others = partitioned(stream, [
    ...Option.match(incremental, { onNone: () => [], onSome: (values) => [{ purpose: `${stream.name}: incremental pass`, values }] }),
    ...(stream.lookup ? [{ purpose: `${stream.name}: lookup by id`, values: stream.lookup([sampleId]) }] : []),
    ...refetchVariables(stream).map((values) => ({ purpose: `${stream.name}: re-read of a change event (${stream.refetch!.description})`, values }))
  ])
  return { full, all: [...full, ...others] }
}

const withPage = (sets: ReadonlyArray<Purposed>, page: Variables): ReadonlyArray<Purposed> =>
  sets.map((s) => ({ purpose: s.purpose, values: { ...s.values, ...page } }))

/** The documents of one stream with the variables each is sent with. */
export const streamDocuments = (stream: AnyStream): ReadonlyArray<SentDocument> => {
  const { full, all } = streamVariables(stream)
  const childFirsts = Object.fromEntries(stream.children.map((c) => [c.firstVariable, c.innerPage]))
  const withoutSort = (sets: ReadonlyArray<Purposed>) =>
    sets.map((s) => {
      const { sort: _, ...rest } = s.values as Record<string, unknown>
      return { purpose: s.purpose, values: rest }
    })
  // by offset, and after a cursor where the service ignores offsets (the pager falls back to `after`)
  const cursor = { offset: { offset: 0 }, after: { after: "Y3Vyc29y" } } as const
  const suffix = { offset: "", after: " after cursors" } as const
  return [
    ...pagings.flatMap((paging) => [
      {
        name: `${stream.name} page${suffix[paging]}`,
        document: stream.documents[paging].page,
        variables: withPage(all, { first: stream.maxPageSize, ...cursor[paging], ...childFirsts })
      },
      // the listing that checks a full pass's rows
      { name: `${stream.name} ids${suffix[paging]}`, document: stream.documents[paging].ids, variables: withPage(full, { first: stream.maxPageSize, ...cursor[paging] }) },
      ...stream.children.map((c) => ({
        name: `${stream.name} ${c.field} follow-up${suffix[paging]}`,
        document: c.followUp[paging],
        variables: withPage(all, { first: 1, ...cursor[paging], childFirst: stream.maxPageSize, childOffset: c.innerPage })
      }))
    ]),
    { name: `${stream.name} count`, document: stream.countDocument, variables: withoutSort(full) }
  ]
}

/** Every document the program sends, for these streams (the whole catalogue by default at the call sites). */
export const sentDocuments = (streams: ReadonlyArray<AnyStream>): ReadonlyArray<SentDocument> => [
  { name: "Account", document: AccountQuery, variables: [{ purpose: "the account query", values: {} }] },
  { name: "AppDisconnect", document: AppDisconnectMutation, variables: [{ purpose: "disconnect", values: {} }] },
  { name: "WebhookSubscriptions", document: WebhookSubscriptionsQuery, variables: [{ purpose: "webhooks subscribe", values: {} }] },
  {
    name: "WebhookSubscriptionCreate",
    document: WebhookSubscriptionCreateMutation,
    variables: topicsOf(streams).map((topic) => ({ purpose: `webhooks subscribe ${topic}`, values: { input: { topic, url: "https://example.com/webhooks" } } }))
  },
  ...streams.flatMap(streamDocuments)
]
