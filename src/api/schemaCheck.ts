import {
  type ASTNode,
  type DocumentNode,
  getNamedType,
  getVariableValues,
  type GraphQLError,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  isEnumType,
  isLeafType,
  isListType,
  isNonNullType,
  Kind,
  type OperationDefinitionNode,
  TypeInfo,
  typeFromAST,
  validate,
  visit
} from "graphql"

/**
 * Moving the API version pin: does every document the program sends still work against another version's schema?
 * Each document is validated against it (a removed field or argument, a variable of another type), each selected
 * field's type compared with the current schema's (what the program decodes), each enum it reads compared value by
 * value, and the variables the program builds coerced by the new schema's input types (a removed sort key or filter).
 */

/** A document the program sends, with the variables it is sent with (each set named by what builds it). */
export interface SentDocument {
  readonly name: string
  readonly document: DocumentNode
  readonly variables: ReadonlyArray<{ readonly purpose: string; readonly values: Readonly<Record<string, unknown>> }>
}

/** One change of the candidate schema that touches what a document sends or reads. */
export interface Finding {
  readonly document: string
  /** The schema coordinate (`Job.title`), or the variable (`$sort`) with what builds it. */
  readonly field: string
  /** Where in the document: the response path (`jobs.nodes.title`). */
  readonly path: string
  readonly change: string
  readonly breaks: boolean
  /** What the change does to the program. */
  readonly effect: string
}

/** The JSON type a leaf's values arrive as; the program decodes by it (enums are kept as text). */
const jsonKind = (type: GraphQLNamedType): "string" | "number" | "boolean" | undefined => {
  if (isEnumType(type)) return "string"
  switch (type.name) {
    case "String":
    case "ID":
    case "EncodedId":
    case "ISO8601DateTime":
    case "ISO8601Date":
    case "Timezone":
      return "string"
    case "Int":
    case "Float":
    case "Minutes":
      return "number"
    case "Boolean":
      return "boolean"
    default:
      return undefined
  }
}

/**
 * graphql-js's rule for an output field: a new type is safe when it only adds non-null where the old had none (the
 * named types compared by `sameNamed`: by name, or not at all to judge the wrapping alone).
 */
const safeForOutput = (
  old: GraphQLOutputType,
  next: GraphQLOutputType,
  sameNamed: (a: GraphQLNamedType, b: GraphQLNamedType) => boolean = (a, b) => a.name === b.name
): boolean => {
  if (isListType(old)) return (isListType(next) && safeForOutput(old.ofType, next.ofType, sameNamed)) || (isNonNullType(next) && safeForOutput(old, next.ofType, sameNamed))
  if (isNonNullType(old)) return isNonNullType(next) && safeForOutput(old.ofType, next.ofType, sameNamed)
  if (isNonNullType(next)) return safeForOutput(old, next.ofType, sameNamed)
  return !isListType(next) && sameNamed(getNamedType(old), getNamedType(next))
}

const looser = { breaks: true, effect: "may now be null, or a list where there was none: the program expects the old form" } as const

const typeChange = (oldType: GraphQLOutputType, newType: GraphQLOutputType): { readonly breaks: boolean; readonly effect: string } => {
  const oldNamed = getNamedType(oldType)
  const newNamed = getNamedType(newType)
  const wrappingSafe = safeForOutput(oldType, newType, () => true)
  if (oldNamed.name === newNamed.name) return wrappingSafe ? { breaks: false, effect: "no longer null: the values it had before" } : looser
  if (isLeafType(oldNamed) !== isLeafType(newNamed)) return { breaks: true, effect: "an object where there was a value (or the reverse)" }
  if (isLeafType(oldNamed)) {
    const [was, is] = [jsonKind(oldNamed), jsonKind(newNamed)]
    if (was === undefined || is === undefined) return { breaks: true, effect: `${newNamed.name}'s values have no known JSON type: the program reads ${was ?? oldNamed.name}` }
    if (was !== is) return { breaks: true, effect: `its values arrive as ${is}s where the program reads ${was}s` }
    return wrappingSafe ? { breaks: false, effect: `its values are still ${was}s (the JSON type the program decodes)` } : looser
  }
  return wrappingSafe ? { breaks: false, effect: "another object type: the fields selected from it are checked one by one" } : looser
}

const names = (values: ReadonlyArray<string>) => values.map((v) => `\`${v}\``).join(", ")

const enumChanges = (oldNamed: GraphQLNamedType, newNamed: GraphQLNamedType): ReadonlyArray<{ readonly change: string; readonly effect: string }> => {
  if (!isEnumType(oldNamed) || !isEnumType(newNamed)) return []
  const before = new Set(oldNamed.getValues().map((v) => v.name))
  const after = new Set(newNamed.getValues().map((v) => v.name))
  const added = [...after].filter((v) => !before.has(v))
  const removed = [...before].filter((v) => !after.has(v))
  return [
    ...(added.length > 0
      ? [{ change: `${newNamed.name} gains ${names(added)}`, effect: "landed as text like every enum value (its column is text, no list of values is checked)" }]
      : []),
    ...(removed.length > 0 ? [{ change: `${newNamed.name} loses ${names(removed)}`, effect: "no longer sent; rows already landed keep it" }] : [])
  ]
}

const operationOf = (document: DocumentNode): OperationDefinitionNode | undefined =>
  document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)

/** The changes of `candidate` (against `current`, the schema the program is written for) that touch one document. */
export const checkDocument = (current: GraphQLSchema, candidate: GraphQLSchema, sent: SentDocument): ReadonlyArray<Finding> => {
  const findings: Array<Finding> = []
  const where = new Map<ASTNode, { readonly field: string; readonly path: string }>()
  const reported = new Set<ASTNode>()
  const add = (node: ASTNode | undefined, f: Omit<Finding, "document">) => {
    findings.push({ document: sent.name, ...f })
    if (node) reported.add(node)
  }

  const before = new TypeInfo(current)
  const after = new TypeInfo(candidate)
  const path: Array<string> = []
  /** Depth of the outermost field the candidate lacks: what is under it is not reported again. */
  let goneAt: number | undefined
  visit(sent.document, {
    enter(node) {
      before.enter(node)
      after.enter(node)
      if (node.kind === Kind.VARIABLE_DEFINITION) where.set(node, { field: `$${node.variable.name.value}`, path: "variables" })
      if (node.kind === Kind.ARGUMENT) {
        const field = after.getFieldDef() ?? before.getFieldDef()
        where.set(node, { field: `${after.getParentType()?.name ?? before.getParentType()?.name ?? "?"}.${field?.name ?? "?"}(${node.name.value})`, path: path.join(".") })
      }
      if (node.kind !== Kind.FIELD) return
      path.push(node.alias?.value ?? node.name.value)
      const oldDef = before.getFieldDef()
      const newDef = after.getFieldDef()
      const oldParent = before.getParentType()
      const newParent = after.getParentType()
      const field = `${oldParent?.name ?? "?"}.${node.name.value}`
      where.set(node, { field, path: path.join(".") })
      if (oldDef === undefined || oldDef === null || goneAt !== undefined) return
      if (newDef === undefined || newDef === null) {
        goneAt = path.length
        add(node, {
          field,
          path: path.join("."),
          change: newParent ? `removed from ${newParent.name}` : `${oldParent?.name ?? "its type"} is gone`,
          breaks: true,
          effect: "the service refuses the whole query"
        })
        return
      }
      if (String(oldDef.type) !== String(newDef.type)) {
        add(undefined, { field, path: path.join("."), change: `type ${oldDef.type} → ${newDef.type}`, ...typeChange(oldDef.type, newDef.type) })
      }
      for (const e of enumChanges(getNamedType(oldDef.type), getNamedType(newDef.type))) add(undefined, { field, path: path.join("."), breaks: false, ...e })
    },
    leave(node) {
      if (node.kind === Kind.FIELD) {
        if (goneAt === path.length) goneAt = undefined
        path.pop()
      }
      before.leave(node)
      after.leave(node)
    }
  })

  const describeError = (e: GraphQLError) => {
    const node = e.nodes?.find((n) => where.has(n))
    if (e.nodes?.some((n) => reported.has(n))) return
    const at = node ? where.get(node)! : { field: "(document)", path: "" }
    add(node, { ...at, change: e.message, breaks: true, effect: "the service refuses the whole query" })
  }
  for (const e of validate(candidate, sent.document)) describeError(e)

  const operation = operationOf(sent.document)
  // coerced only where the variable's type exists in both schemas (otherwise validation said so above)
  const definitions = (operation?.variableDefinitions ?? []).filter((d) => typeFromAST(candidate, d.type) !== undefined)
  const seen = new Set<string>()
  for (const { purpose, values } of sent.variables) {
    // one variable at a time, so each refusal is named by its variable
    for (const definition of definitions) {
      const result = getVariableValues(candidate, [definition], values as Record<string, unknown>)
      for (const e of "errors" in result ? (result.errors ?? []) : []) {
        if (seen.has(e.message)) continue
        seen.add(e.message)
        add(undefined, {
          field: `$${definition.variable.name.value} (${purpose})`,
          path: "variables",
          change: e.message,
          breaks: true,
          effect: "the service refuses the query with the values the program sends"
        })
      }
    }
  }
  return findings
}

/** Every change of `candidate` that touches one of the documents. */
export const checkDocuments = (current: GraphQLSchema, candidate: GraphQLSchema, documents: ReadonlyArray<SentDocument>): ReadonlyArray<Finding> =>
  documents.flatMap((d) => checkDocument(current, candidate, d))

/** Variable values a document's operation refuses in `schema` (the program's own check of what it builds). */
export const variableProblems = (schema: GraphQLSchema, sent: SentDocument): ReadonlyArray<string> => {
  const definitions = operationOf(sent.document)?.variableDefinitions ?? []
  return sent.variables.flatMap(({ purpose, values }) => {
    const result = getVariableValues(schema, definitions, values as Record<string, unknown>)
    return "errors" in result ? (result.errors ?? []).map((e) => `${purpose}: ${e.message}`) : []
  })
}
