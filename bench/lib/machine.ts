import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as os from "node:os"

export interface MachineInfo {
  readonly cpu: string
  readonly cores: number
  readonly memoryGb: number
  readonly node: string
  readonly postgres: string
  readonly loadAverage: ReadonlyArray<number>
}

export const machineInfo = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ v: string }>`SELECT current_setting('server_version') AS v`
  return {
    cpu: os.cpus()[0]?.model.trim() ?? "unknown",
    cores: os.cpus().length,
    memoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    postgres: rows[0]?.v ?? "unknown",
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100)
  } satisfies MachineInfo
})

export const describeMachine = (m: MachineInfo) =>
  `${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB RAM, Node ${m.node}, PostgreSQL ${m.postgres}`
