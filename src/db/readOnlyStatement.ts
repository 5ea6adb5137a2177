import * as v8 from "node:v8"
import { Data, Effect } from "effect"

/** A statement `query` does not run, and why. */
export class QueryRefused extends Data.TaggedError("QueryRefused")<{ readonly reason: string }> {
  override get message() {
    return `query refused: ${this.reason} (query runs exactly one read-only statement: ${allowedList})`
  }
}

const allowedList = "SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN"

/**
 * Functions whose effect outlives the statement or reaches past the transaction (locks, signals, settings, files,
 * replication, WAL, notifications, other connections, large objects) or that run SQL given as text (the `*_to_xml`
 * of a query, `ts_stat`): refused wherever they appear in the parsed statement, with or without a schema.
 */
const sideEffectFunctions = new Set([
  "set_config", "pg_notify", "pg_reload_conf", "pg_rotate_logfile", "pg_switch_wal", "pg_switch_xlog",
  "pg_create_restore_point", "pg_promote", "pg_export_snapshot", "pg_import_system_collations",
  "pg_log_backend_memory_contexts", "pg_log_standby_snapshot", "pg_current_xact_id", "txid_current",
  "nextval", "setval", "gin_clean_pending_list", "pg_prewarm", "pg_truncate_visibility_map", "pg_sync_replication_slots",
  "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml", "cursor_to_xmlschema",
  "ts_stat", "ts_rewrite", "pg_stat_statements_reset", "pg_stat_force_next_flush", "loread", "lowrite",
  "pg_logdir_ls", "pg_stat_file"
])
const sideEffectPrefixes = [
  "pg_advisory_", "pg_try_advisory_", "pg_terminate_backend", "pg_cancel_backend", "pg_signal_backend",
  "dblink", "lo_", "pg_read_", "pg_ls_", "pg_file_", "pg_stat_reset", "pg_create_", "pg_drop_replication_slot",
  "pg_copy_", "pg_replication_", "pg_logical_", "pg_wal_replay_", "pg_xlog_replay_", "pg_backup_", "pg_start_backup",
  "pg_stop_backup", "brin_summarize_", "brin_desummarize_", "binary_upgrade_", "pg_background"
]

/** Whether calling the function `name` (lowercase, without schema) is refused. */
const hasSideEffects = (name: string): boolean =>
  sideEffectFunctions.has(name) || sideEffectPrefixes.some((prefix) => name.startsWith(prefix))

/** Node kinds of a parse tree that change data wherever they appear (a data-modifying WITH included). */
const dataModifying: Record<string, string> = {
  InsertStmt: "INSERT",
  UpdateStmt: "UPDATE",
  DeleteStmt: "DELETE",
  MergeStmt: "MERGE"
}

/** How a refused top-level statement kind is named to the user. */
const refusedKind = (kind: string, node: Record<string, unknown>): string => {
  switch (kind) {
    case "TransactionStmt":
      return `${String(node["kind"] ?? "").replace(/^TRANS_STMT_/, "").replace(/_/g, " ")} is transaction control`
    case "VariableSetStmt":
      return "SET changes the session"
    case "DiscardStmt":
    case "LoadStmt":
    case "ListenStmt":
    case "UnlistenStmt":
    case "NotifyStmt":
      return `${kind.replace(/Stmt$/, "").toUpperCase()} changes the session`
    case "CopyStmt":
      return "COPY reads and writes files and runs programs on the server"
    default:
      return `${kind.replace(/Stmt$/, "").replace(/([a-z])([A-Z])/g, "$1 $2").toUpperCase()} is not a read-only statement`
  }
}

const svalOf = (node: unknown): string | undefined => (node as { String?: { sval?: string } })?.String?.sval

/**
 * Every name in a parse (sub)tree that Postgres may resolve to a function: a function's name; the last name of a
 * column reference of two or more (`x.f` is `f(x)` when x is a row) and every name of an attribute chain
 * (`(expr).f.g` is `g(f(expr))`); operator names (`+`, `OPERATOR(s.op)`, a sublink's `= ANY`, `ORDER BY ... USING`);
 * type names (a cast calls the type's input or cast function); a TABLESAMPLE method. Of a qualified name only the
 * last part resolves (the rest are schemas and tables); a lone column name (`SELECT f FROM t`) and column aliases are
 * never calls. Names are as Postgres's parser leaves them (folded when unquoted, exact when quoted), so spelling
 * (case, quotes, U& escapes, a schema) does not matter. `calls` are the names called as `f(...)`, kept apart only
 * to say so when refusing.
 */
const namesIn = (value: unknown, found: { names: Set<string>; calls: Set<string> }): void => {
  if (Array.isArray(value)) {
    for (const item of value) namesIn(item, found)
    return
  }
  if (value === null || typeof value !== "object") return
  for (const [key, inner] of Object.entries(value)) {
    const sval = key === "String" ? (inner as { sval?: string }).sval : undefined
    if (sval !== undefined) found.names.add(sval)
    if (key === "colnames") continue
    if (key !== "indirection" && Array.isArray(inner) && inner.length > 0 && inner.every((item) => svalOf(item) !== undefined)) {
      if (!(key === "fields" && inner.length === 1)) found.names.add(svalOf(inner[inner.length - 1])!)
      continue
    }
    if (key === "FuncCall") {
      const names = (inner as { funcname?: ReadonlyArray<unknown> }).funcname ?? []
      const name = svalOf(names[names.length - 1])
      if (name !== undefined) found.calls.add(name)
    }
    namesIn(inner, found)
  }
}

/** The first reason found anywhere in a parse (sub)tree to refuse it for its shape (not its calls), or undefined. */
const refusalIn = (value: unknown): string | undefined => {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = refusalIn(item)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (value === null || typeof value !== "object") return undefined
  for (const [key, inner] of Object.entries(value)) {
    if (key in dataModifying) return `${dataModifying[key]} changes data (a data-modifying WITH included)`
    if (key === "intoClause") return "SELECT INTO creates a table"
    if (key === "lockingClause" && Array.isArray(inner) && inner.length > 0) return "FOR UPDATE / FOR SHARE locks rows"
    const found = refusalIn(inner)
    if (found !== undefined) return found
  }
  return undefined
}

/** Why a statement whose names are `found` is refused for a function it names, or undefined. */
const refusalOfNames = (found: { names: Set<string>; calls: Set<string> }): string | undefined => {
  for (const name of found.calls) if (hasSideEffects(name.toLowerCase())) return `${name.toLowerCase()}() has effects beyond reading`
  for (const name of found.names) {
    if (hasSideEffects(name.toLowerCase())) return `${name.toLowerCase()} names a function with effects beyond reading`
  }
  return undefined
}

/** The part of one parsed statement whose names are judged: the statement, or the SELECT an EXPLAIN shows. */
const judgedPart = (statement: Record<string, unknown>): { readonly part: unknown } | { readonly refusal: string } => {
  const [kind, node] = Object.entries(statement)[0] ?? []
  if (kind === undefined) return { refusal: "no statement given" }
  const body = (node ?? {}) as Record<string, unknown>
  switch (kind) {
    case "SelectStmt":
    case "VariableShowStmt":
      return { part: body }
    case "ExplainStmt": {
      const inner = (body["query"] ?? {}) as Record<string, unknown>
      const innerKind = Object.keys(inner)[0]
      if (innerKind !== "SelectStmt") return { refusal: `EXPLAIN of ${innerKind === undefined ? "nothing" : refusedKind(innerKind, {}).replace(/ is not a read-only statement$/, "")}: only EXPLAIN of a query that reads` }
      return { part: inner }
    }
    default:
      return { refusal: refusedKind(kind, body) }
  }
}

type Parser = typeof import("libpg-query")

/**
 * Postgres's own parser (libpg_query, WebAssembly), loaded once, on first use: only `query` needs it. Compiled
 * without tier-up to the optimizing compiler: a statement is parsed once, and a tier-up still compiling in the
 * background when the process exits deadlocked Node's exit (nodejs/node#54918: `query` failing at once hung for
 * minutes on the loaded CI machine, its main thread and V8's workers all waiting on futexes).
 */
const parser: Effect.Effect<Parser> = Effect.cached(
  Effect.promise(async () => {
    v8.setFlagsFromString("--no-wasm-tier-up")
    v8.setFlagsFromString("--no-wasm-dynamic-tiering")
    const module = await import("libpg-query")
    await module.loadModule()
    return module
  })
).pipe(Effect.runSync)

/**
 * A statement `query` may send: one statement that only reads, by its shape, and the names in it that Postgres may
 * resolve to a function or operator. What those names reach is the server's to say (which functions exist, in which
 * schemas, with which volatility): the read-only session asks its catalog before it runs the statement
 * (readOnlyCalls.ts).
 */
export interface CheckedStatement {
  readonly text: string
  readonly names: ReadonlyArray<string>
}

/**
 * `statement` as a CheckedStatement, or why it is refused before it reaches the database. The text is parsed by
 * Postgres's own grammar, so comments, quoting, dollar quoting, `E''` and `U&` escapes and `;` inside strings are read
 * as the server reads them; the parse tree, not the text, is judged: one statement, of kind SELECT (WITH, VALUES and
 * TABLE are SELECTs), SHOW or EXPLAIN of a SELECT, with no data-modifying part, no SELECT INTO, no row locks and no
 * name, in any position that can call, of a function with effects beyond reading. The functions the names reach, the
 * read-only transaction and the role the statement runs as are the walls behind this one.
 */
export const checkStatement = (statement: string): Effect.Effect<CheckedStatement, QueryRefused> =>
  Effect.gen(function* () {
    if (statement.includes("\0")) return yield* new QueryRefused({ reason: "the statement holds a NUL character" })
    const { parseSync } = yield* parser
    if (statement.trim() === "") return yield* new QueryRefused({ reason: "no statement given" })
    const parsed = yield* Effect.try({ try: () => parseSync(statement), catch: (error) => (error instanceof Error ? error.message : String(error)) }).pipe(
      Effect.catchAll((error) => Effect.succeed({ error }))
    )
    if ("error" in parsed) return yield* new QueryRefused({ reason: `not a statement Postgres can parse: ${parsed.error}` })
    const statements = parsed.stmts ?? []
    if (statements.length === 0) return yield* new QueryRefused({ reason: "no statement given" })
    if (statements.length > 1) return yield* new QueryRefused({ reason: "more than one statement" })
    const judged = judgedPart((statements[0]!.stmt ?? {}) as Record<string, unknown>)
    if ("refusal" in judged) return yield* new QueryRefused({ reason: judged.refusal })
    const shape = refusalIn(judged.part)
    if (shape !== undefined) return yield* new QueryRefused({ reason: shape })
    const found = { names: new Set<string>(), calls: new Set<string>() }
    namesIn(judged.part, found)
    const named = refusalOfNames(found)
    if (named !== undefined) return yield* new QueryRefused({ reason: named })
    return { text: statement, names: [...found.names] }
  })
