import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"

export interface MachineInfo {
  readonly cpu: string
  readonly cores: number
  readonly memoryGb: number
  readonly node: string
  readonly postgres: string
  readonly loadAverage: ReadonlyArray<number>
}

/** The machine's cores, as every figure of the bench divides by them. */
export const machineCores = () => os.cpus().length

export const machineInfo = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ v: string }>`SELECT current_setting('server_version') AS v`
  return {
    cpu: os.cpus()[0]?.model.trim() ?? "unknown",
    cores: machineCores(),
    memoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    postgres: rows[0]?.v ?? "unknown",
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100)
  } satisfies MachineInfo
})

export const describeMachine = (m: MachineInfo) =>
  `${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB RAM, Node ${m.node}, PostgreSQL ${m.postgres}`

const clockTicks = 100

/** User + system CPU seconds of a process from /proc (0 when it is gone). */
export const processCpuSeconds = (pid: number): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / clockTicks
  } catch {
    return 0
  }
}

/** CPU seconds of every Postgres server process on this machine, by pid (backends, writers, checkpointer). */
export const postgresCpu = (): ReadonlyMap<number, number> => {
  const cpu = new Map<number, number>()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "postgres") continue
    } catch {
      continue
    }
    cpu.set(Number(entry), processCpuSeconds(Number(entry)))
  }
  return cpu
}

/** Postgres's CPU seconds between two readings (processes that started between them count from 0). */
export const postgresCpuSince = (before: ReadonlyMap<number, number>): number => {
  let seconds = 0
  for (const [pid, now] of postgresCpu()) seconds += now - (before.get(pid) ?? 0)
  return seconds
}
