import { QueryRefused } from "./readOnlyStatement.js"

/**
 * Volatile functions that only read: Postgres marks a function VOLATILE when it may change something, and also when
 * its answer changes within a statement (a clock, a random number, a size on disk).
 */
const volatileReads = new Set([
  "random", "random_normal", "clock_timestamp", "timeofday", "gen_random_uuid", "pg_relation_size", "pg_table_size",
  "pg_indexes_size", "pg_total_relation_size", "pg_database_size", "pg_tablespace_size", "pg_is_in_recovery",
  "pg_blocking_pids", "pg_partition_tree", "pg_partition_ancestors",
  // TABLESAMPLE's methods (their handlers are volatile: a sample differs each time)
  "bernoulli", "system"
])

/** Operators a statement calls without naming them: comparisons (BETWEEN, IN, ORDER BY, DISTINCT) and LIKE's. */
const impliedOperators = ["=", "<>", "<", ">", "<=", ">=", "~~", "~~*", "!~~", "!~~*", "~", "~*", "!~", "!~*"]

/**
 * The volatile functions a statement holding the names `$1` can reach, each with one way it reaches it: a function
 * of that name in any schema (whichever resolution picks, the judgement covers them all), an operator of that name
 * or one the syntax implies, a cast into a type of that name or any implicit cast, a type's input function.
 */
const reachedVolatileSql = `
WITH reached(fn, via) AS (
  SELECT p.oid, p.proname || '()' FROM pg_proc p WHERE p.proname = ANY($1::text[])
  UNION ALL
  SELECT o.oprcode::oid, 'the operator ' || o.oprname FROM pg_operator o
   WHERE o.oprcode::oid <> 0 AND (o.oprname = ANY($1::text[]) OR o.oprname = ANY($2::text[]))
  UNION ALL
  SELECT c.castfunc, 'a cast to ' || format_type(c.casttarget, NULL) FROM pg_cast c JOIN pg_type t ON t.oid = c.casttarget
   WHERE c.castfunc <> 0 AND (c.castcontext = 'i' OR t.typname = ANY($1::text[]))
  UNION ALL
  SELECT t.typinput::oid, 'the input of type ' || format_type(t.oid, NULL) FROM pg_type t WHERE t.typname = ANY($1::text[])
)
SELECT DISTINCT ON (p.proname) p.proname AS name, r.via
  FROM reached r JOIN pg_proc p ON p.oid = r.fn
 WHERE p.provolatile = 'v'
 ORDER BY p.proname, r.via = p.proname || '()' DESC, r.via`

export interface ReachedVolatile {
  readonly name: string
  readonly via: string
}

/** The catalog query and its parameters for a statement's names (see readOnlyStatement.ts's CheckedStatement). */
export const reachedVolatileQuery = (names: ReadonlyArray<string>) => ({ text: reachedVolatileSql, values: [[...names], impliedOperators] })

/**
 * Why a statement is refused for a function it reaches, or undefined: the allowlist is every function Postgres marks
 * IMMUTABLE or STABLE (neither may change the database) and the volatile ones that only read; the names with effects
 * beyond reading that are neither volatile nor harmless were refused by name before the statement was sent.
 */
export const refusalOfReached = (reached: ReadonlyArray<ReachedVolatile>): QueryRefused | undefined => {
  const refused = reached.find((fn) => !volatileReads.has(fn.name))
  if (refused === undefined) return undefined
  const how = refused.via === `${refused.name}()` ? `${refused.name}()` : `${refused.via} calls ${refused.name}(), which`
  return new QueryRefused({
    reason: `${how} is volatile (Postgres lets it change things); query calls only immutable and stable functions, and volatile ones that only read (random(), clock_timestamp(), the pg_*_size() functions, ...)`
  })
}
