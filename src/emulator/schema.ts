import { buildSchema, type GraphQLSchema } from "graphql"
import * as fs from "node:fs"

/** The schema subset the emulator serves: `schema/service-subset.graphql`, built once. */
export const schemaPath = new URL("../../schema/service-subset.graphql", import.meta.url)

let cachedSchema: GraphQLSchema | undefined
export const serviceSchema = (): GraphQLSchema => (cachedSchema ??= buildSchema(fs.readFileSync(schemaPath, "utf8")))
