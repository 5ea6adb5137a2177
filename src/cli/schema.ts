import { Args, Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { buildSchema, type GraphQLSchema, validateSchema } from "graphql"
import * as fs from "node:fs"
import { type Finding, checkDocuments } from "../api/schemaCheck.js"
import { serviceSchema, serviceSchemaPath } from "../api/serviceSchema.js"
import { printable } from "../observability/printable.js"
import { sentDocuments } from "./sentDocuments.js"
import { definedStreams } from "../sync/streams/index.js"
import { ExitCodes, ExitWith } from "./ExitCode.js"
import { withHelp } from "./help.js"
import { alignedTable } from "./table.js"

/** The candidate schema file, built and validated: an unreadable or invalid one is bad input (exit 2), said plainly. */
const loadSchema = (file: string): Effect.Effect<GraphQLSchema, ExitWith> =>
  Effect.try({
    try: () => {
      const schema = buildSchema(fs.readFileSync(file, "utf8"))
      const problems = validateSchema(schema)
      if (problems.length > 0) throw new Error(problems.map((p) => p.message).join("; "))
      return schema
    },
    catch: (e) => new ExitWith({ code: ExitCodes.usage, message: `schema check: ${file}: ${printable(e instanceof Error ? e.message : String(e))}` })
  })

const listed = (documents: ReadonlyArray<string>) =>
  documents.length <= 3 ? documents.join(", ") : `${documents.slice(0, 3).join(", ")} and ${documents.length - 3} more`

/** One line per field and change (the documents it touches together), what breaks first. */
export const findingsTable = (findings: ReadonlyArray<Finding>): string => {
  const groups = new Map<string, { readonly finding: Finding; readonly documents: Array<string> }>()
  for (const f of findings) {
    const key = `${f.field}\n${f.change}`
    const group = groups.get(key) ?? { finding: f, documents: [] }
    if (!group.documents.includes(f.document)) group.documents.push(f.document)
    groups.set(key, group)
  }
  const rows = [...groups.values()].sort((a, b) => Number(b.finding.breaks) - Number(a.finding.breaks) || a.finding.field.localeCompare(b.finding.field))
  return alignedTable([
    ["FIELD", "CHANGE", "BREAKS", "WHAT IT DOES", "SENT IN"],
    ...rows.map(({ finding: f, documents }) => [printable(f.field, 80), printable(f.change, 200), f.breaks ? "yes" : "no", f.effect, listed(documents)])
  ])
}

const file = Args.file({ name: "SCHEMA.graphql", exists: "yes" }).pipe(Args.withDescription("The schema (SDL) of the API version to move to"))

/** `schema check FILE`: every document the program sends, checked against another API version's schema. */
const checkCommand = withHelp(Command.make("check", { file }, ({ file }) =>
  Effect.gen(function* () {
    const candidate = yield* loadSchema(file)
    const documents = sentDocuments(definedStreams)
    const findings = checkDocuments(serviceSchema(), candidate, documents)
    const breaking = findings.filter((f) => f.breaks)
    const sets = documents.reduce((n, d) => n + d.variables.length, 0)
    yield* Console.log(
      `checked ${documents.length} documents the program sends (${sets} sets of variables) against ${file}, compared with ${serviceSchemaPath}`
    )
    if (findings.length > 0) yield* Console.log(`\n${findingsTable(findings)}\n`)
    if (breaking.length === 0) {
      return yield* Console.log(
        findings.length === 0 ? "nothing the program sends or reads changes: the pin can move" : "nothing breaks: the changes above leave what the program sends and reads working"
      )
    }
    const fields = new Set(breaking.map((f) => f.field)).size
    return yield* new ExitWith({
      code: ExitCodes.failure,
      message: `${fields} field(s) or variable(s) break ${new Set(breaking.map((f) => f.document)).size} of the documents: the program needs changing before the pin moves`
    })
  })
), {
  purpose: "Check every document the program sends against another API version's schema.",
  details: "Each stream's queries, lookups, the account query and the mutations; lists what changes, field by field, and exits 1 when something breaks.",
  examples: ["account-sync schema check 2025-07-01.graphql"]
})

export const schemaCommand = withHelp(Command.make("schema").pipe(Command.withSubcommands([checkCommand])), {
  purpose: "The API version's schema: `schema check SCHEMA.graphql` before moving SERVICE_GRAPHQL_VERSION.",
  examples: ["account-sync schema check 2025-07-01.graphql"],
  subcommands: [["check", checkCommand]]
})
