import { Data, Effect, type Scope } from "effect"
import * as fs from "node:fs"
import { printable } from "../observability/printable.js"

/** Another live process has the embedded database's directory open: opening it too would lose what it commits. */
export class DataDirInUse extends Data.TaggedError("DataDirInUse")<{
  readonly dataDir: string
  readonly pid: number
  readonly command: string
}> {
  override get message() {
    return `DATA_DIR ${this.dataDir} is in use by process ${this.pid} (${printable(this.command, 200)}); stop it first, or set DATABASE_URL to share a Postgres server`
  }
}

/** The lock file's contents: who holds the directory. */
interface Owner {
  readonly pid: number
  readonly command: string
  /** The script the owner runs (process.argv[1]): tells a reused pid from the owner. */
  readonly script: string
}

const ownerOf = (text: string): Owner | undefined => {
  try {
    const value = JSON.parse(text) as Partial<Owner>
    return typeof value.pid === "number" ? { pid: value.pid, command: String(value.command ?? "?"), script: String(value.script ?? "") } : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether the owner still runs: its pid exists and, where /proc tells what runs there (Linux), it runs the same
 * script (a pid reused by another program after the owner died is not the owner).
 */
const isAlive = (owner: Owner): boolean => {
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  try {
    const cmdline = fs.readFileSync(`/proc/${owner.pid}/cmdline`, "utf8")
    return owner.script === "" || cmdline.split("\0").includes(owner.script)
  } catch {
    return true
  }
}

/** Directories this process holds: a second open within the process is refused like one from another. */
const heldHere = new Set<string>()

/**
 * Holds the embedded database's directory for this process until the scope closes: `<dataDir>.lock`, created
 * exclusively (O_EXCL) with the owner's pid and command. A lock whose owner is dead (killed, crashed) is taken over;
 * a live owner's is not, and opening fails at once naming it.
 */
export const holdDataDir = (dataDir: string): Effect.Effect<void, DataDirInUse, Scope.Scope> => {
  const lockFile = `${dataDir}.lock`
  const me: Owner = { pid: process.pid, command: ["account-sync", ...process.argv.slice(2)].join(" "), script: process.argv[1] ?? "" }
  const create = (): boolean => {
    try {
      fs.writeFileSync(lockFile, JSON.stringify(me), { flag: "wx", mode: 0o600 })
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
      throw error
    }
  }
  const read = (): string | undefined => {
    try {
      return fs.readFileSync(lockFile, "utf8")
    } catch {
      return undefined
    }
  }
  const acquire = Effect.suspend((): Effect.Effect<void, DataDirInUse> => {
    if (heldHere.has(dataDir)) return Effect.fail(new DataDirInUse({ dataDir, pid: me.pid, command: `${me.command} (this process)` }))
    for (let attempt = 0; attempt < 3; attempt++) {
      if (create()) {
        heldHere.add(dataDir)
        return Effect.void
      }
      const text = read()
      if (text === undefined) continue
      const owner = ownerOf(text)
      if (owner !== undefined && owner.pid !== me.pid && isAlive(owner)) return Effect.fail(new DataDirInUse({ dataDir, ...owner }))
      // the owner is gone (or the file is damaged): take over, unless another process just did
      if (read() === text) fs.rmSync(lockFile, { force: true })
    }
    const owner = ownerOf(read() ?? "")
    return Effect.fail(new DataDirInUse({ dataDir, pid: owner?.pid ?? 0, command: owner?.command ?? "unknown" }))
  })
  const release = Effect.sync(() => {
    heldHere.delete(dataDir)
    if (ownerOf(read() ?? "")?.pid === me.pid) fs.rmSync(lockFile, { force: true })
  })
  return Effect.acquireRelease(acquire, () => release)
}
