import type { Account, App, AppsAndAccounts } from "./AppsAndAccounts.js"
import type { WebhookSubscriptionInfo } from "./EmulatorAdmin.js"
import { ConnectionValue } from "./graphql/ConnectionValue.js"
import type { RootResolver } from "./graphql/Executor.js"
import { encodeId, isoSeconds } from "./Ids.js"
import type { VirtualClock } from "./VirtualClock.js"
import type { WebhookTarget } from "./Webhooks.js"

/**
 * The webhook subscriptions apps make per account (`webhookSubscriptions`, `webhookSubscriptionCreate`,
 * `webhookSubscriptionDelete`), and where a change event of a topic goes: to each connected app's subscribed URLs,
 * and to its webhook URL when the app lists the topic among its app-level `webhookTopics`.
 */

/** The service lists 100 subscriptions of an app and account at most ("List of 100 app account webhooks"). */
export const MAX_SUBSCRIPTIONS = 100

interface Subscription {
  readonly n: number
  readonly appId: string
  readonly accountId: string
  readonly topic: string
  readonly url: string
  readonly createdAtMs: number
}

const validUrl = (value: string): boolean => {
  try {
    const u = new URL(value)
    return u.protocol === "http:" || u.protocol === "https:"
  } catch {
    return false
  }
}

export class WebhookSubscriptions {
  private readonly byPair = new Map<string, Array<Subscription>>()
  private counter = 0

  constructor(
    private readonly appsAndAccounts: AppsAndAccounts,
    private readonly clock: VirtualClock
  ) {}

  private of(appId: string, accountId: string): Array<Subscription> {
    const key = `${appId}|${accountId}`
    let list = this.byPair.get(key)
    if (list === undefined) this.byPair.set(key, (list = []))
    return list
  }

  /** Every subscription, or those of one app and/or account, oldest first. */
  list(filter: { readonly appId?: string; readonly accountId?: string } = {}): ReadonlyArray<WebhookSubscriptionInfo> {
    return [...this.byPair.values()]
      .flat()
      .filter((s) => (filter.appId === undefined || s.appId === filter.appId) && (filter.accountId === undefined || s.accountId === filter.accountId))
      .sort((a, b) => a.n - b.n)
      .map((s) => ({ id: idOf(s), appId: s.appId, accountId: s.accountId, topic: s.topic, url: s.url, createdAt: isoSeconds(s.createdAtMs) }))
  }

  /** Where an event of `topic` for `account` goes: per connected app, its subscribed URLs and its app-level webhook URL, each once. */
  targets(account: Account, topic: string): ReadonlyArray<WebhookTarget> {
    const out: Array<WebhookTarget> = []
    for (const app of this.appsAndAccounts.apps.values()) {
      if (this.appsAndAccounts.connection(app.appId, account.accountId).status !== "connected") continue
      const urls = new Set(this.byPair.get(`${app.appId}|${account.accountId}`)?.filter((s) => s.topic === topic).map((s) => s.url))
      if (app.webhookUrl !== undefined && app.webhookTopics.includes(topic)) urls.add(app.webhookUrl)
      for (const url of urls) out.push({ app, url })
    }
    return out
  }

  /** The root fields for a request of `app` on `account`. */
  resolvers(app: App, account: Account): Record<string, RootResolver> {
    const node = (s: Subscription) => ({
      id: idOf(s),
      topic: s.topic,
      url: s.url,
      createdAt: isoSeconds(s.createdAtMs),
      updatedAt: isoSeconds(s.createdAtMs),
      attachedTo: { __typename: "Account", id: account.accountId, name: account.name },
      createdBy: { __typename: "Application", id: app.appId, name: app.name }
    })
    const mine = () => this.of(app.appId, account.accountId)
    return {
      webhookSubscriptions: (args) => ConnectionValue.ofList(mine().map(node), args, "`webhookSubscriptions`", MAX_SUBSCRIPTIONS),
      webhookSubscriptionCreate: (args) => {
        const input = args.input as { readonly topic: string; readonly url: string }
        const error = (message: string, field: string) => ({ webhookSubscription: null, userErrors: [{ message, path: ["input", field] }] })
        if (!validUrl(input.url)) return error(`url must be an absolute http(s) URL, got ${JSON.stringify(input.url)}`, "url")
        const list = mine()
        if (list.some((s) => s.topic === input.topic && s.url === input.url)) return error(`${input.topic} is already subscribed at ${input.url}`, "topic")
        if (list.length >= MAX_SUBSCRIPTIONS) return error(`an app may have at most ${MAX_SUBSCRIPTIONS} webhook subscriptions per account`, "topic")
        const subscription: Subscription = {
          n: ++this.counter,
          appId: app.appId,
          accountId: account.accountId,
          topic: input.topic,
          url: input.url,
          createdAtMs: this.clock.nowMs()
        }
        list.push(subscription)
        return { webhookSubscription: node(subscription), userErrors: [] }
      },
      webhookSubscriptionDelete: (args) => {
        const ids = args.webhookSubscriptionIds as ReadonlyArray<string>
        const list = mine()
        const deleted: Array<ReturnType<typeof node>> = []
        const userErrors: Array<{ message: string; path: ReadonlyArray<string> }> = []
        for (const id of ids) {
          const index = list.findIndex((s) => idOf(s) === id)
          if (index < 0) {
            userErrors.push({ message: `no webhook subscription ${id} of this app for this account`, path: ["webhookSubscriptionIds"] })
            continue
          }
          deleted.push(node(list[index]!))
          list.splice(index, 1)
        }
        return { deletedWebhookSubscriptions: deleted, userErrors }
      }
    }
  }
}

const idOf = (s: Subscription) => encodeId("WebhookSubscription", s.n)
