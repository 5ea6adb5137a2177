import { PGlite } from "@electric-sql/pglite"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"

/**
 * A new embedded database starts from a copy of an empty one made earlier on this machine, not from initdb: PGlite's
 * initdb costs ~5 CPU s, loading the copy (its `dumpDataDir` tar, 40 MB) ~1 s. The copy is taken of the first
 * database this PGlite version initializes, before anything is written to it, and kept in the user's cache directory
 * under the version's name. Best effort both ways: without a cache directory, or with a copy that does not load, the
 * database is made by initdb as before (and a copy that does not load is replaced).
 */
const pgliteVersion = (): string => {
  // its package.json is not among its exports: found above its entry point
  let dir = path.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"))
  while (!fs.existsSync(path.join(dir, "package.json"))) {
    if (path.dirname(dir) === dir) throw new Error("PGlite's package.json not found")
    dir = path.dirname(dir)
  }
  return (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string }).version
}

/** Where this machine keeps the copy for this PGlite version (undefined: no cache directory to be found). */
export const defaultTemplateFile = (): string | undefined => {
  try {
    const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache")
    return path.join(cacheHome, "account-sync", `embedded-postgres-${pgliteVersion()}.tar`)
  } catch {
    return undefined
  }
}

const readTemplate = (file: string): Blob | undefined => {
  try {
    return new Blob([fs.readFileSync(file)])
  } catch {
    return undefined
  }
}

/** Keeps a copy of `db`, a database initdb has just made: written whole, then renamed into place. */
const keepTemplate = async (db: PGlite, file: string): Promise<void> => {
  try {
    const dump = Buffer.from(await (await db.dumpDataDir("none")).arrayBuffer())
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    const partial = `${file}.${process.pid}.partial`
    fs.writeFileSync(partial, dump, { mode: 0o600 })
    fs.renameSync(partial, file)
  } catch {
    // no copy kept: the next new database is made by initdb again
  }
}

const isNew = (dataDir: string | "memory") => dataDir === "memory" || fs.readdirSync(dataDir).length === 0

const initialize = async (where: string | undefined, template: string | undefined): Promise<PGlite> => {
  const db = await PGlite.create(where)
  if (template !== undefined) await keepTemplate(db, template)
  return db
}

/**
 * PGlite on `dataDir` (an existing directory, or "memory"): an existing database opens as it is; a new one loads the
 * kept copy of an empty database when there is one, else is made by initdb and a copy of it is kept.
 */
export const openEmbeddedDatabase = async (dataDir: string | "memory", template = defaultTemplateFile()): Promise<PGlite> => {
  const where = dataDir === "memory" ? undefined : dataDir
  if (!isNew(dataDir)) return PGlite.create(where)
  const copy = template === undefined ? undefined : readTemplate(template)
  if (copy === undefined) return initialize(where, template)
  try {
    return await PGlite.create(where, { loadDataDir: copy })
  } catch {
    // another build's copy, or a damaged one: the directory back to empty, and initdb
    if (where !== undefined) for (const name of fs.readdirSync(where)) fs.rmSync(path.join(where, name), { recursive: true, force: true })
    return initialize(where, template)
  }
}
