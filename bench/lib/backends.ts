import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as fs from "node:fs"

/**
 * Local TCP ports of `pid`'s connections to Postgres on `pgPort`, read from /proc (socket inodes of the process
 * matched against /proc/net/tcp{,6}): how chaos finds the backends of ONE connector child among every
 * `account-sync` session on a Postgres that other processes share.
 */
export const postgresClientPorts = (pid: number, pgPort: number): ReadonlyArray<number> => {
  let inodes: Set<string>
  try {
    inodes = new Set(
      fs.readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))
          return m ? [m[1]!] : []
        } catch {
          return []
        }
      })
    )
  } catch {
    return []
  }
  const ports: Array<number> = []
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = ""
    try {
      text = fs.readFileSync(file, "utf8")
    } catch {
      continue
    }
    for (const line of text.split("\n").slice(1)) {
      const parts = line.trim().split(/\s+/)
      if (parts.length < 10) continue
      const local = parseInt(parts[1]!.split(":")[1] ?? "", 16)
      const remote = parseInt(parts[2]!.split(":")[1] ?? "", 16)
      if (remote === pgPort && inodes.has(parts[9]!)) ports.push(local)
    }
  }
  return ports
}

/** pg_terminate_backend on the sessions of process `pid` whose name starts with `applicationName`; the number terminated. */
export const terminateBackendsOf = (pid: number, pgPort: number, applicationName = "account-sync") =>
  Effect.gen(function* () {
    const ports = postgresClientPorts(pid, pgPort)
    if (ports.length === 0) return 0
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ t: boolean }>(
      `SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity
       WHERE starts_with(application_name, $2) AND client_port = ANY($1::int[]) AND pid <> pg_backend_pid()`,
      [ports, applicationName]
    )
    return rows.filter((r) => r.t).length
  })
