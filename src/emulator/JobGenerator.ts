import type { ListedRecord } from "./EmulatorAdmin.js"
import { encodeId, isoSeconds } from "./Ids.js"
import { hash32, pick, unit } from "./Prng.js"

/**
 * Deterministic jobs: every field is a pure function of (account seed, job index), so a million jobs cost no
 * memory until served. Each field draws from its own salt, so sorting by one field never generates the others.
 */

const seasons = ["Spring", "Summer", "Fall", "Winter", "Weekly", "Monthly", "Annual", "One-time", "Emergency", "Post-storm"]
const services = [
  "lawn aeration", "gutter cleaning", "window washing", "hedge trimming", "snow removal", "pressure washing",
  "deck staining", "furnace tune-up", "AC maintenance", "leaf cleanup", "pool opening", "fence repair",
  "carpet cleaning", "tree pruning", "roof inspection", "irrigation start-up", "garage cleanout", "mulching"
]
const places = ["", "", "", " – front yard", " – backyard", " (north side)", " at the cottage", " – 2nd floor", " for the Dubois family"]
const specials = [
  "Café terrasse ☕ pressure wash", "Déneigement entrée & trottoir", "Jardín trasero – poda 🌳", "Nettoyage vitres 🪟",
  "Zürich office move-out clean", "Ærøskøbing boat-house paint", "Façade repointing", "Piñata party cleanup 🎉",
  "Œuvre d'art: mural touch-up", "Ремонт забора", "庭の手入れ (garden care)", "Crème brûlée bakery hood clean 🔥"
]
const instructionsPool = [
  "Gate code 4412. Dog in the yard, friendly.", "Park on the street, not the driveway.", "Call before arriving.",
  "Clé sous le pot de fleurs 🌼", "Use the side entrance; watch the low beam.", "Invoice to the property manager."
]
const statuses = [
  "active", "active", "upcoming", "upcoming", "today", "late", "action_required", "on_hold", "unscheduled",
  "requires_invoicing", "archived", "archived", "expiring_within_30_days"
] as const
const sources = [
  "CLIENT", "GQL_API", "HOME", "INTERNAL", "JOB", "JOB_NEW", "JOBS_INDEX", "ONLINE_BOOKING", "QUICK_CREATE",
  "QUOTE_CONVERT", "REQUEST_CONVERT", "SCHEDULE_DAY", "SCHEDULE_WEEK", "REACT_SCHEDULE_DAY", "JOB_PREFILL_MOBILE"
] as const
const firstNames = ["Ana", "Benoît", "Chloé", "Dmitri", "Emma", "Farid", "Grace", "Hiroshi", "Inès", "José", "Kai", "Léa", "Mateo", "Noor", "Olivia", "Priya"]
const lastNames = ["Anderson", "Bélanger", "Chen", "Dubois", "Eriksson", "García", "Haddad", "Ivanova", "Jensen", "Kowalski", "Lemaire", "Müller", "Nakamura", "O'Brien"]
const companies = ["Maple & Co.", "Sunrise Dental", "Café Lumière", "Northside HOA", "Greenway Apartments", "Boulangerie Saint-Roch"]

const DAY = 86_400_000

// one salt per field: sorting by a key computes only that key
const enum Salt {
  title = 1, titleKind, place, status, type, billing, source, total, invoicedShare, visits, startOffset, duration,
  instructions, review, booking, ready, autoCharge, updatedOffset, client, nullTitle
}

export interface JobSeedContext {
  readonly seed: number
  /** Prefix of internal job numbers, so ids are unique across accounts. */
  readonly idBase: number
  readonly webBase: string
}

export const jobInternalId = (ctx: JobSeedContext, index: number): number => ctx.idBase + index + 1
export const jobId = (ctx: JobSeedContext, index: number): string => encodeId("Job", jobInternalId(ctx, index))

export const jobTitle = (seed: number, index: number): string | null => {
  const r = unit(seed, index, Salt.nullTitle)
  if (r < 0.015) return null
  if (r < 0.025) return ""
  if (unit(seed, index, Salt.titleKind) < 0.06) return pick(specials, seed, index, Salt.title)
  return `${pick(seasons, seed, index, Salt.title)} ${pick(services, seed, index, Salt.titleKind)}${pick(places, seed, index, Salt.place)}`
}

export const jobStatus = (seed: number, index: number): string => pick(statuses, seed, index, Salt.status)
export const jobTotal = (seed: number, index: number): number => Math.round(unit(seed, index, Salt.total) * 250_000) / 100

/** Base updatedAt (before any edit): some time after creation, never after the segment's end. */
export const baseUpdatedMs = (seed: number, index: number, createdMs: number, capMs: number): number =>
  Math.max(createdMs, Math.min(capMs, createdMs + Math.floor(unit(seed, index, Salt.updatedOffset) * 30 * DAY)))

export const clientIndexOf = (seed: number, index: number, clientCount: number): number =>
  hash32(seed, index, Salt.client) % Math.max(1, clientCount)

/** The full record of one job as the GraphQL endpoint serves it (every scalar field of `Job`). */
export const generateJob = (ctx: JobSeedContext, index: number, createdMs: number, updatedMs: number): ListedRecord => {
  const { seed } = ctx
  const title = jobTitle(seed, index)
  const status = jobStatus(seed, index)
  const total = jobTotal(seed, index)
  const closed = status === "archived" || status === "requires_invoicing"
  const invoiced = closed ? Math.round(total * (status === "archived" ? 1 : unit(seed, index, Salt.invoicedShare)) * 100) / 100 : 0
  const unscheduled = status === "unscheduled"
  const startMs = createdMs + Math.floor(unit(seed, index, Salt.startOffset) * 20 * DAY)
  const endMs = startMs + (1 + Math.floor(unit(seed, index, Salt.duration) * 8)) * 3_600_000
  const visits = closed ? 0 : hash32(seed, index, Salt.visits) % 4
  const instructionsDraw = unit(seed, index, Salt.instructions)
  const internal = jobInternalId(ctx, index)
  return {
    id: encodeId("Job", internal),
    jobNumber: index + 1,
    title,
    createdAt: isoSeconds(createdMs),
    updatedAt: isoSeconds(updatedMs),
    allowReviewRequest: unit(seed, index, Salt.review) < 0.7,
    billingType: unit(seed, index, Salt.billing) < 0.6 ? "FIXED_PRICE" : "VISIT_BASED",
    bookingConfirmationSentAt: unit(seed, index, Salt.booking) < 0.3 ? isoSeconds(createdMs + 3_600_000) : null,
    completedAndUninvoicedVisitsCount: visits,
    completedAndUninvoicedVisitsTotal: Math.round(visits * total * 25) / 100,
    completedAt: closed ? isoSeconds(endMs) : null,
    defaultVisitTitle: title ?? "",
    endAt: unscheduled ? null : isoSeconds(endMs),
    instructions: instructionsDraw < 0.5 ? null : instructionsDraw < 0.6 ? "" : pick(instructionsPool, seed, index, Salt.instructions),
    invoicedTotal: invoiced,
    jobStatus: status,
    jobType: unit(seed, index, Salt.type) < 0.8 ? "ONE_OFF" : "RECURRING",
    jobberWebUri: `${ctx.webBase}/work_orders/${internal}`,
    nextDateToSendReviewSms: status === "archived" && unit(seed, index, Salt.review) < 0.2 ? isoSeconds(endMs + 2 * DAY) : null,
    pendingInvoiceStartsAt: status === "requires_invoicing" ? isoSeconds(endMs) : null,
    readyToClose: status === "requires_invoicing" && unit(seed, index, Salt.ready) < 0.5,
    source: pick(sources, seed, index, Salt.source),
    startAt: unscheduled ? null : isoSeconds(startMs),
    total,
    uninvoicedTotal: Math.round((total - invoiced) * 100) / 100,
    visitGenerationInProgress: false,
    visitReschedulingInProgress: false,
    willClientBeAutomaticallyCharged: unit(seed, index, Salt.autoCharge) < 0.3 ? null : unit(seed, index, Salt.autoCharge) < 0.6
  }
}

/** Values an edit gives a job (title and a few fields), drawn from the edit's own seed. */
export const editedFields = (seed: number, index: number, editSeed: number): Record<string, unknown> => {
  const s = seed ^ Math.imul(editSeed + 1, 0x2545f491)
  const title = `${pick(seasons, s, index, Salt.title)} ${pick(services, s, index, Salt.titleKind)} (revised${unit(s, index, Salt.place) < 0.2 ? " ✏️" : ""})`
  return {
    title,
    defaultVisitTitle: title,
    jobStatus: pick(statuses, s, index, Salt.status),
    instructions: unit(s, index, Salt.instructions) < 0.5 ? null : pick(instructionsPool, s, index, Salt.instructions)
  }
}

/** A client as `Job.client` serves it (every scalar field of `Client`). */
export const generateClient = (ctx: JobSeedContext, clientIndex: number, createdMs: number): Record<string, unknown> => {
  const { seed } = ctx
  const salt = 1000
  const first = pick(firstNames, seed, clientIndex, salt + 1)
  const last = pick(lastNames, seed, clientIndex, salt + 2)
  const isCompany = unit(seed, clientIndex, salt + 3) < 0.25
  const company = isCompany ? pick(companies, seed, clientIndex, salt + 4) : null
  const internal = ctx.idBase + clientIndex + 1
  return {
    id: encodeId("Client", internal),
    balance: Math.round(unit(seed, clientIndex, salt + 5) * 50_000) / 100,
    billingAddressPresent: unit(seed, clientIndex, salt + 6) < 0.4,
    clientHubDelegateLoginUrl: null,
    clientHubUserId: null,
    companyName: company,
    createdAt: isoSeconds(createdMs),
    email: unit(seed, clientIndex, salt + 7) < 0.85 ? `${first}.${last}@example.com`.toLowerCase().replace(/[^a-z0-9.@-]/g, "") : null,
    firstName: first,
    isArchivable: true,
    isArchived: false,
    isBillingContact: true,
    isCompany,
    isLead: unit(seed, clientIndex, salt + 8) < 0.1,
    isPaymentTermAccountDefault: true,
    jobberWebUri: `${ctx.webBase}/clients/${internal}`,
    lastName: last,
    leadSource: unit(seed, clientIndex, salt + 9) < 0.5 ? null : "Referral",
    name: company ?? `${first} ${last}`,
    phone: unit(seed, clientIndex, salt + 10) < 0.7 ? `555-01${String(clientIndex % 100).padStart(2, "0")}` : null,
    receivesFollowUps: true,
    receivesInvoiceFollowUps: true,
    receivesQuoteFollowUps: true,
    receivesReminders: unit(seed, clientIndex, salt + 11) < 0.8,
    receivesReviewRequests: unit(seed, clientIndex, salt + 12) < 0.6,
    role: "client",
    sampleData: false,
    scheduledItemsAvailable: true,
    secondaryName: isCompany ? `${first} ${last}` : null,
    title: null,
    updatedAt: isoSeconds(createdMs)
  }
}
