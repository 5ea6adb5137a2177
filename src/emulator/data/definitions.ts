import { isoSeconds } from "../Ids.js"
import { editedFields, generateJob } from "../JobGenerator.js"
import { hash32, pick, unit } from "../Prng.js"
import type { LinkRule, RecordDefinition, RecordInput } from "./RecordDefinition.js"

/**
 * Every collection of the schema subset, as data. Links keep the world consistent: a job's property belongs to its
 * client, a visit belongs to a job (and to that job's client and property), quotes, invoices and requests to clients,
 * every line item to its parent. Sizes scale with the account's jobs unless the account says otherwise.
 */

/** A link to a record of `to` drawn from the record's own seed; `share` of the records have one (the rest: null). */
const drawn = (to: string, salt: number, share = 1): LinkRule => ({
  to,
  pick: (input, sizeOf) => {
    const n = sizeOf(to)
    if (n === 0 || (share < 1 && unit(input.seed, input.index, salt + 1) >= share)) return null
    return hash32(input.seed, input.index, salt) % n
  }
})

/** The primary property of the record's client (property i < clients is client i's). */
const clientsProperty = (clientField: string): LinkRule => ({
  to: "properties",
  pick: (input, sizeOf, linkOf) => {
    const client = linkOf("__self", clientField, input.index)
    return client === null || client >= sizeOf("properties") ? null : client
  }
})

/** The same link as the record's `via` record has (a visit's client is its job's client). */
const through = (via: string, viaCollection: string, field: string, to: string): LinkRule => ({
  to,
  pick: (input, _sizeOf, linkOf) => {
    const parent = linkOf("__self", via, input.index)
    return parent === null ? null : linkOf(viaCollection, field, parent)
  }
})

const time = (field: string) => ({ kind: "time" as const, field })

const jobContext = (input: RecordInput) => ({ seed: input.seed, idBase: input.idNumber - input.index - 1, webBase: input.webBase })

export const jobs: RecordDefinition = {
  name: "jobs",
  scope: "read_jobs",
  nodeType: "Job",
  size: (jobs) => jobs,
  fields: (input) => {
    const { id: _id, ...fields } = generateJob(jobContext(input), input.index, input.createdMs, input.updatedMs)
    return fields
  },
  edit: (input, editSeed) => editedFields(input.seed, input.index, editSeed),
  links: {
    client: drawn("clients", 101),
    property: clientsProperty("client"),
    quote: drawn("quotes", 103, 0.3),
    request: drawn("requests", 105, 0.2),
    salesperson: drawn("users", 107, 0.5)
  },
  sortKeys: { UPDATED_AT: "updatedAt", JOB_NUMBER: "jobNumber", TOTAL_COST: "total", JOB_STATUS: "jobStatus" },
  filters: {
    ids: { kind: "ids" },
    createdAt: time("createdAt"),
    startAt: time("startAt"),
    endAt: time("endAt"),
    completedAt: time("completedAt"),
    status: { kind: "equals", field: "jobStatus" },
    jobType: { kind: "equals", field: "jobType" }
  },
  children: { field: "lineItems", nodeType: "JobLineItem" },
  customFields: ["customFields"]
}

const personName = (input: RecordInput, salt: number) => {
  const first = pick(["Ana", "Benoît", "Chloé", "Dmitri", "Emma", "Farid", "Grace", "Hiroshi", "Inès", "José", "Kai", "Léa"], input.seed, input.index, salt)
  const last = pick(["Anderson", "Bélanger", "Chen", "Dubois", "Eriksson", "García", "Haddad", "Jensen", "Müller", "O'Brien"], input.seed, input.index, salt + 1)
  return { first, last }
}

export const clients: RecordDefinition = {
  name: "clients",
  scope: "read_clients",
  nodeType: "Client",
  size: (jobs) => Math.ceil(jobs / 3),
  fields: (input) => {
    const { first, last } = personName(input, 201)
    const isCompany = unit(input.seed, input.index, 203) < 0.25
    const companyName = isCompany ? pick(["Maple & Co.", "Sunrise Dental", "Café Lumière", "Northside HOA", "Østergaard ApS"], input.seed, input.index, 204) : null
    return {
      firstName: first,
      lastName: last,
      isCompany,
      companyName,
      name: companyName ?? `${first} ${last}`,
      role: "client",
      jobberWebUri: `${input.webBase}/clients/${input.idNumber}`
    }
  },
  sortKeys: { UPDATED_AT: "updatedAt", PRIMARY_NAME: "name", FIRST_NAME: "firstName", LAST_NAME: "lastName" },
  filters: { createdAt: time("createdAt"), updatedAt: time("updatedAt"), isCompany: { kind: "equals", field: "isCompany" }, isLead: { kind: "equals", field: "isLead" }, isArchived: { kind: "equals", field: "isArchived" } },
  customFields: ["customFields"]
}

export const properties: RecordDefinition = {
  name: "properties",
  scope: "read_clients",
  nodeType: "Property",
  size: (jobs) => Math.ceil((Math.ceil(jobs / 3) * 6) / 5),
  fields: (input) => ({ jobberWebUri: `${input.webBase}/properties/${input.idNumber}` }),
  links: {
    // the first `clients` properties are each client's primary one; the rest belong to clients drawn at random
    client: { to: "clients", pick: (input, sizeOf) => (sizeOf("clients") === 0 ? null : input.index < sizeOf("clients") ? input.index : hash32(input.seed, input.index, 301) % sizeOf("clients")) }
  },
  filters: { clientId: { kind: "link", field: "client" }, primary: { kind: "equals", field: "isBillingAddress" } },
  customFields: ["customFields"]
}

export const requests: RecordDefinition = {
  name: "requests",
  scope: "read_requests",
  nodeType: "Request",
  size: (jobs) => Math.ceil(jobs / 4),
  fields: (input) => ({ jobberWebUri: `${input.webBase}/requests/${input.idNumber}`, app: null }),
  links: {
    client: drawn("clients", 401),
    property: clientsProperty("client"),
    referringClient: drawn("clients", 403, 0.1),
    salesperson: drawn("users", 405, 0.3)
  },
  sortKeys: { TITLE: "title", REQUESTED_AT: "createdAt", STATUS: "requestStatus" },
  filters: {
    clientId: { kind: "link", field: "client" },
    propertyId: { kind: "link", field: "property" },
    status: { kind: "equals", field: "requestStatus" },
    createdAt: time("createdAt"),
    updatedAt: time("updatedAt")
  },
  children: { field: "lineItems", nodeType: "RequestLineItem" },
  arguments: { timezone: undefined }
}

export const quotes: RecordDefinition = {
  name: "quotes",
  scope: "read_quotes",
  nodeType: "Quote",
  size: (jobs) => Math.ceil(jobs / 2),
  fields: (input) => ({ quoteNumber: String(input.index + 1), jobberWebUri: `${input.webBase}/quotes/${input.idNumber}`, transitionedAt: isoSeconds(input.updatedMs) }),
  links: {
    client: drawn("clients", 501),
    property: clientsProperty("client"),
    request: drawn("requests", 503, 0.3),
    salesperson: drawn("users", 505, 0.4)
  },
  sortKeys: { CREATED_AT: "createdAt", QUOTE_NUMBER: "quoteNumber", QUOTE_STATUS: "quoteStatus", QUOTE_TOTAL: "amounts.total" },
  filters: {
    clientId: { kind: "link", field: "client" },
    salespersonId: { kind: "link", field: "salesperson" },
    status: { kind: "equals", field: "quoteStatus" },
    createdAt: time("createdAt"),
    updatedAt: time("updatedAt"),
    sentAt: time("sentAt")
  },
  children: { field: "lineItems", nodeType: "QuoteLineItem" },
  customFields: ["customFields"]
}

export const visits: RecordDefinition = {
  name: "visits",
  scope: "read_jobs",
  nodeType: "Visit",
  size: (jobs) => Math.floor(jobs * 1.5),
  fields: (input) => ({ visitStatus: pick(["UPCOMING", "TODAY", "COMPLETED", "LATE", "UNSCHEDULED"], input.seed, input.index, 601) }),
  links: {
    // about 1.5 visits per job, in the jobs' creation order
    job: { to: "jobs", pick: (input, sizeOf) => (sizeOf("jobs") === 0 ? null : Math.min(sizeOf("jobs") - 1, Math.floor((input.index * 2) / 3))) },
    client: through("job", "jobs", "client", "clients"),
    property: through("job", "jobs", "property", "properties"),
    invoice: drawn("invoices", 603, 0.3),
    createdBy: drawn("users", 605, 0.6)
  },
  sortKeys: { CREATED_AT: "createdAt", START_AT: "startAt", STATUS: "visitStatus" },
  filters: {
    ids: { kind: "ids" },
    createdAt: time("createdAt"),
    startAt: time("startAt"),
    endAt: time("endAt"),
    completedAt: time("completedAt"),
    status: { kind: "equals", field: "visitStatus" },
    isComplete: { kind: "equals", field: "isComplete" }
  },
  // a visit's line items are its job's (the same ids)
  children: { field: "lineItems", nodeType: "JobLineItem", of: { link: "job", collection: "jobs" } },
  arguments: { timezone: undefined }
}

export const invoices: RecordDefinition = {
  name: "invoices",
  scope: "read_invoices",
  nodeType: "Invoice",
  size: (jobs) => Math.ceil(jobs / 2),
  fields: (input) => ({ invoiceNumber: String(input.index + 1), jobberWebUri: `${input.webBase}/invoices/${input.idNumber}`, jobIds: [], propertyIds: [], transactionIds: [] }),
  links: {
    client: drawn("clients", 701),
    salesperson: drawn("users", 703, 0.4)
  },
  sortKeys: {
    CREATED_AT: "createdAt",
    UPDATED_AT: "updatedAt",
    ISSUED_DATE: "issuedDate",
    DUE_DATE: "dueDate",
    INVOICE_NUMBER: "invoiceNumber",
    INVOICE_STATUS: "invoiceStatus",
    INVOICE_TOTAL: "amounts.total"
  },
  filters: {
    clientId: { kind: "link", field: "client" },
    status: { kind: "equals", field: "invoiceStatus" },
    createdAt: time("createdAt"),
    updatedAt: time("updatedAt"),
    issuedDate: time("issuedDate"),
    dueDate: time("dueDate")
  },
  children: { field: "lineItems", nodeType: "InvoiceLineItem" },
  customFields: ["customFields", "customFieldValues"]
}

export const users: RecordDefinition = {
  name: "users",
  scope: "read_users",
  nodeType: "User",
  size: (_jobs, seed) => 5 + (seed % 16),
  fields: (input) => {
    const { first, last } = personName(input, 801)
    return { name: { first, last, full: `${first} ${last}` }, status: unit(input.seed, input.index, 803) < 0.85 ? "ACTIVATED" : "DEACTIVATED", account: null }
  },
  sortKeys: { NAME: "name.full" },
  filters: { status: { kind: "equals", field: "status" }, userIds: { kind: "ids" } },
  customFields: ["customFields"]
}

export const products: RecordDefinition = {
  name: "products",
  scope: "read_products",
  nodeType: "ProductOrService",
  size: (_jobs, seed) => 30 + (seed % 71),
  fields: (input) => ({ visible: unit(input.seed, input.index, 901) < 0.9 }),
  sortIn: "filter.sort",
  sortKeys: { NAME: "name", CATEGORY: "category" },
  filters: { ids: { kind: "ids" }, category: { kind: "equals", field: "category" } },
  arguments: {
    // hidden products are listed only with showInactive
    showInactive: (value) => (value === true ? () => true : (record) => record.visible !== false)
  }
}

/** The collections of an account, parents first. */
export const definitions: ReadonlyArray<RecordDefinition> = [users, products, clients, properties, requests, quotes, jobs, visits, invoices]

/** The scopes of these collections: what an app asks for unless it says otherwise. */
export const scopesOf = (defs: ReadonlyArray<RecordDefinition>): ReadonlyArray<string> => [...new Set(defs.map((d) => d.scope))]

/** Root fields that list another collection's records (the deprecated `productOrServices`: the products, all of them). */
export const aliases: Readonly<Record<string, string>> = { productOrServices: "products" }
