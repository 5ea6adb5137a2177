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
