/**
 * What makes a name unusable as DB_SCHEMA, said before anything connects: the statements interpolate the schema
 * unquoted, so it must be a plain identifier that is not a keyword, and not a schema Postgres keeps for itself.
 */

/**
 * Every Postgres keyword that is not "unreserved" (reserved, type/function-name and column-name keywords, as
 * `pg_get_keywords()` lists them from Postgres 15 on, with those added up to 17): unquoted, none of them reads as a
 * schema name everywhere the connector puts one.
 */
const keywords = new Set(
  [
    // reserved
    "all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create",
    "current_catalog current_date current_role current_time current_timestamp current_user default deferrable desc",
    "distinct do else end except false fetch for foreign from grant group having in initially intersect into lateral",
    "leading limit localtime localtimestamp not null offset on only or order placing primary references returning",
    "select session_user some symmetric system_user table then to trailing true union unique user using variadic when",
    "where window with",
    // type or function names
    "authorization binary collation concurrently cross current_schema freeze full ilike inner is isnull join left like",
    "natural notnull outer overlaps right similar tablesample verbose",
    // column names
    "between bigint bit boolean char character coalesce dec decimal exists extract float greatest grouping inout int",
    "integer interval json json_array json_arrayagg json_exists json_object json_objectagg json_query json_scalar",
    "json_serialize json_table json_value least merge_action national nchar none normalize nullif numeric out overlay",
    "position precision real row setof smallint substring time timestamp treat trim values varchar xmlattributes",
    "xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable"
  ]
    .join(" ")
    .split(" ")
)

/** Whether `name` is a keyword Postgres does not accept as a plain schema name. */
export const isReservedWord = (name: string): boolean => keywords.has(name.toLowerCase())

/** Schemas of Postgres itself: the catalogs, `information_schema`, and every `pg_` name (reserved for system schemas). */
export const isSystemSchema = (name: string): boolean => name === "information_schema" || name.toLowerCase().startsWith("pg_")

/** Why `name` cannot be DB_SCHEMA, or undefined when it can. */
export const schemaNameProblem = (name: string): string | undefined => {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    return "DB_SCHEMA: expected a Postgres identifier (lowercase letters, digits and underscores, starting with a letter)"
  }
  if (isSystemSchema(name)) return `DB_SCHEMA: "${name}" is a system schema of Postgres; choose a schema of your own (e.g. account_sync)`
  if (isReservedWord(name)) return `DB_SCHEMA: "${name}" is a reserved word in Postgres; choose another schema name (e.g. account_sync)`
  return undefined
}
