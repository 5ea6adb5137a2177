import { isEnumType } from "graphql"
import type { Change } from "./data/World.js"
import { serviceSchema } from "./schema.js"

/**
 * Webhook topics as the schema's `WebHookTopicEnum` names them: `{OBJECT}_{EVENT}`, the object in upper snake case of
 * the node type (`Job` -> `JOB_UPDATE`, `ProductOrService` -> `PRODUCT_OR_SERVICE_DESTROY`). A change of a collection
 * whose topic the enum does not have (users have no USER_DESTROY; line items have none) sends nothing.
 */

let cached: ReadonlySet<string> | undefined

/** Every value of WebHookTopicEnum. */
export const webhookTopics = (): ReadonlySet<string> => {
  if (cached === undefined) {
    const type = serviceSchema().getType("WebHookTopicEnum")
    if (!isEnumType(type)) throw new Error("emulator: the schema subset has no WebHookTopicEnum")
    cached = new Set(type.getValues().map((v) => v.name))
  }
  return cached
}

const events: Readonly<Record<Change["kind"], string>> = { create: "CREATE", update: "UPDATE", destroy: "DESTROY" }

/** `ProductOrService` -> `PRODUCT_OR_SERVICE`. */
export const topicObject = (nodeType: string): string => nodeType.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()

/** The topic of a change to a record of `nodeType`, or undefined when the service has none for it. */
export const topicOf = (nodeType: string, kind: Change["kind"]): string | undefined => {
  const topic = `${topicObject(nodeType)}_${events[kind]}`
  return webhookTopics().has(topic) ? topic : undefined
}
