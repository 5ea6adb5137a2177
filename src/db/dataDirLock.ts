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
  /**
   * When the owner started (Linux: the boot's id and the process's start time in clock ticks since boot, from
   * /proc), absent where there is no /proc: pid and start time name one process however it was started, and a pid
   * reused after the owner died has a later start.
   */
  readonly started?: string
}

const ownerOf = (text: string): Owner | undefined => {
  try {
    const value = JSON.parse(text) as Partial<Owner>
    if (typeof value.pid !== "number") return undefined
    const command = String(value.command ?? "?")
    return typeof value.started === "string" ? { pid: value.pid, command, started: value.started } : { pid: value.pid, command }
  } catch {
    return undefined
  }
}

/**
 * When the process `pid` started, or undefined where /proc cannot tell (not Linux, or hidden). The start time is
 * field 22 of /proc/<pid>/stat, counted after the command name's closing parenthesis (the name may hold spaces and
 * parentheses of its own).
 */
const startedOf = (pid: number | "self"): string | undefined => {
  try {
    const bootId = fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
    return startTime === undefined || !/^\d+$/.test(startTime) ? undefined : `${bootId} ${startTime}`
  } catch {
    return undefined
  }
}

/**
 * Whether the owner still runs: its pid exists and, where /proc tells when that process started, it started when
 * the owner did (a pid reused after the owner died is another process). Not the command line: it holds the script
 * as it was typed (relative, through npx, a symbolic link or env), which says nothing about who runs.
 */
const isAlive = (owner: Owner): boolean => {
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  if (owner.started === undefined) return true
  const started = startedOf(owner.pid)
  return started === undefined || started === owner.started
}

/** Directories this process holds: a second open within the process is refused like one from another. */
const heldHere = new Set<string>()

/**
 * Holds the embedded database's directory for this process until the scope closes: `<dataDir>.lock`, created
 * exclusively (O_EXCL) with the owner's pid, start time and command. A lock whose owner is dead (killed, crashed) is taken over;
 * a live owner's is not, and opening fails at once naming it.
 */
export const holdDataDir = (dataDir: string): Effect.Effect<void, DataDirInUse, Scope.Scope> => {
  const lockFile = `${dataDir}.lock`
  const started = startedOf("self")
  const command = ["account-sync", ...process.argv.slice(2)].join(" ")
  const me: Owner = started === undefined ? { pid: process.pid, command } : { pid: process.pid, command, started }
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
      if (owner !== undefined && owner.pid !== me.pid && isAlive(owner)) return Effect.fail(new DataDirInUse({ dataDir, pid: owner.pid, command: owner.command }))
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
