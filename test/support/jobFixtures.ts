import type { PageRows } from "../../src/sync/landing/pageParams.js"
import type { ReceivedNode } from "../../src/sync/model.js"
import type { JobNode } from "../../src/sync/streams/jobs.js"

/** A job as the service would send it (every scalar field), for Warehouse tests that need no service. */
export const job = (n: number, overrides: Partial<Record<keyof JobNode, unknown>> = {}): JobNode & Record<string, unknown> =>
  ({
    id: `Z2lkOi8vSm9iLyR7bn0=${n}`,
    jobNumber: n,
    title: `Job ${n}`,
    jobStatus: "active",
    jobType: "ONE_OFF",
    billingType: "FIXED_PRICE",
    source: "GQL_API",
    instructions: null,
    defaultVisitTitle: `Visit for job ${n}`,
    jobberWebUri: `https://example.test/jobs/${n}`,
    total: 100.25 + n,
    invoicedTotal: 0,
    uninvoicedTotal: 100.25 + n,
    completedAndUninvoicedVisitsCount: 0,
    completedAndUninvoicedVisitsTotal: 0,
    readyToClose: false,
    allowReviewRequest: true,
    visitGenerationInProgress: false,
    visitReschedulingInProgress: false,
    willClientBeAutomaticallyCharged: null,
    startAt: "2025-01-02T09:00:00Z",
    endAt: null,
    completedAt: null,
    bookingConfirmationSentAt: null,
    nextDateToSendReviewSms: null,
    pendingInvoiceStartsAt: null,
    createdAt: "2025-01-01T00:00:00Z",
    updatedAt: `2025-01-01T00:${String(n % 60).padStart(2, "0")}:00Z`,
    ...overrides
  }) as JobNode & Record<string, unknown>

export const landed = (nodes: ReadonlyArray<ReturnType<typeof job>>) => nodes.map((node) => ({ node, raw: node }))

/** A job's line item as the service sends it inside the job. */
export const lineItem = (id: string, name: string, updatedAt = "2025-01-01T00:00:00Z") => ({
  id,
  name,
  description: "",
  category: "SERVICE",
  quantity: 1,
  unitPrice: 5,
  totalPrice: 5,
  totalCost: null,
  taxable: false,
  linkedProductOrService: null,
  createdAt: "2025-01-01T00:00:00Z",
  updatedAt
})

/** Job `n` as read at some moment (its title, update time and line items), ready to land. */
export const jobRead = (n: number, title: string, updatedAt: string, items: ReadonlyArray<ReturnType<typeof lineItem>> = []) => {
  const node = {
    ...job(n),
    title,
    updatedAt,
    client: { id: "c-1" },
    property: { id: "p-1" },
    quote: null,
    request: null,
    salesperson: null,
    lineItems: { nodes: items },
    customFields: []
  }
  return { node: node as { id: string }, raw: node }
}

/** Rows read outside a page of the service: one page without a body, as Warehouse.land takes them. */
export const rowsRead = (nodes: ReadonlyArray<ReceivedNode>): ReadonlyArray<PageRows> => [{ nodes, body: undefined }]
