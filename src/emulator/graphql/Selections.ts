import {
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, getArgumentValues, getDirectiveValues, type GraphQLField, GraphQLIncludeDirective,
  isAbstractType, type GraphQLObjectType, type GraphQLSchema, GraphQLSkipDirective, Kind, type SelectionSetNode
} from "graphql"

/** The fields of a selection set, by response key (the same key may be selected several times). */
export type Collected = ReadonlyArray<readonly [responseKey: string, nodes: ReadonlyArray<FieldNode>]>

/** One operation's selections: the fields each selection set asks of a type (fragments spread, directives applied) and field arguments, each worked out once. */
export class Selections {
  private readonly fragments = new Map<string, FragmentDefinitionNode>()
  private readonly collected = new Map<SelectionSetNode, Map<string, Collected>>()
  private readonly argumentValues = new Map<FieldNode, Record<string, unknown>>()

  constructor(
    private readonly schema: GraphQLSchema,
    document: DocumentNode,
    private readonly variables: Record<string, unknown>
  ) {
    for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(d.name.value, d)
  }

  /** `@skip` and `@include`. */
  private included(node: { readonly directives?: ReadonlyArray<unknown> | undefined } & Parameters<typeof getDirectiveValues>[1]): boolean {
    if (!node.directives || node.directives.length === 0) return true
    if (getDirectiveValues(GraphQLSkipDirective, node, this.variables)?.if === true) return false
    return getDirectiveValues(GraphQLIncludeDirective, node, this.variables)?.if !== false
  }

  /** Whether a fragment's type condition holds for a value of `type`. */
  private typeApplies(condition: string | undefined, type: GraphQLObjectType): boolean {
    if (condition === undefined || condition === type.name) return true
    const t = this.schema.getType(condition)
    return t !== undefined && isAbstractType(t) && this.schema.isSubType(t, type)
  }

  /** The fields a selection set asks of a value of `type`, by response key (fragments spread, directives applied). */
  collect(set: SelectionSetNode, type: GraphQLObjectType): Collected {
    let byType = this.collected.get(set)
    const cached = byType?.get(type.name)
    if (cached) return cached
    const out = new Map<string, Array<FieldNode>>()
    const visited = new Set<string>()
    const walk = (s: SelectionSetNode) => {
      for (const sel of s.selections) {
        if (!this.included(sel)) continue
        if (sel.kind === Kind.FIELD) {
          const key = sel.alias?.value ?? sel.name.value
          const list = out.get(key)
          if (list) list.push(sel)
          else out.set(key, [sel])
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          if (this.typeApplies(sel.typeCondition?.name.value, type)) walk(sel.selectionSet)
        } else {
          const frag = this.fragments.get(sel.name.value)
          if (!frag || visited.has(frag.name.value)) continue
          visited.add(frag.name.value)
          if (this.typeApplies(frag.typeCondition.name.value, type)) walk(frag.selectionSet)
        }
      }
    }
    walk(set)
    const collected: Collected = [...out]
    if (!byType) this.collected.set(set, (byType = new Map()))
    byType.set(type.name, collected)
    return collected
  }

  /** The fields the nodes of one response key ask of their value (the same key may be selected several times). */
  collectAll(nodes: ReadonlyArray<FieldNode>, type: GraphQLObjectType): Collected {
    const sets: Array<SelectionSetNode> = []
    for (const n of nodes) if (n.selectionSet) sets.push(n.selectionSet)
    if (sets.length === 1) return this.collect(sets[0]!, type)
    const merged = new Map<string, Array<FieldNode>>()
    for (const s of sets) for (const [key, fields] of this.collect(s, type)) merged.set(key, [...(merged.get(key) ?? []), ...fields])
    return [...merged]
  }

  argumentsOf(def: GraphQLField<unknown, unknown>, node: FieldNode): Record<string, unknown> {
    let args = this.argumentValues.get(node)
    if (!args) this.argumentValues.set(node, (args = getArgumentValues(def, node, this.variables)))
    return args
  }
}
