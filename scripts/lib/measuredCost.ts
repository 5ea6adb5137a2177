import type { MeasuredCost } from "./freshness.js"

/**
 * Points a row spent by stream, measured 2026-11-28: `account-sync emulator --jobs 200` (the seed 1 account: 947
 * rows), `account-sync backfill`, then `account-sync query "SELECT stream, sum(cost_points) / sum(rows) FROM sync_runs
 * GROUP BY stream"`. 80,394 points for 947 rows: 85 a row over the account. Measure again when a stream's selection
 * changes (the requested figures beside these follow from the definitions by themselves).
 */
export const measuredCost: MeasuredCost = {
  on: "2026-11-28",
  how: "measured on a backfill of the emulator's account of 200 jobs (947 rows, 80,394 points: 85 a row)",
  pointsPerRow: { users: 55.1, products: 17.8, clients: 50.3, properties: 26.7, requests: 94.7, quotes: 107.0, jobs: 97.7, visits: 89.5, invoices: 116.8 }
}
