import { buildSchema, type GraphQLSchema, isEnumType } from "graphql"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"

/** The vendored schema subset of the service: the contract every document we send is validated against. */
export const serviceSchemaPath = fileURLToPath(new URL("../../schema/service-subset.graphql", import.meta.url))

let cached: GraphQLSchema | undefined

/** Built once per process; the file is part of the source tree, so a failure here is a packaging bug. */
export const serviceSchema = (): GraphQLSchema => (cached ??= buildSchema(fs.readFileSync(serviceSchemaPath, "utf8")))

let topics: ReadonlyArray<string> | undefined

/** Every topic a webhook delivery may have: the values of the schema's WebHookTopicEnum (APP_DISCONNECT, JOB_UPDATE, ...). */
export const webhookTopicNames = (): ReadonlyArray<string> => {
  if (topics === undefined) {
    const type = serviceSchema().getType("WebHookTopicEnum")
    if (!isEnumType(type)) throw new Error("the schema subset has no WebHookTopicEnum")
    topics = type.getValues().map((v) => v.name)
  }
  return topics
}
