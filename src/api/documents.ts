import type { DocumentNode } from "graphql"
import { gql } from "graphql-tag"

/**
 * Every GraphQL document the connector sends. Each one validates against the vendored schema subset
 * (test/api/documents.test.ts), so what works against the emulator also parses against the real API.
 */

/** Ties a token to its account; also refreshes the account's name at each sync run. */
export const AccountQuery: DocumentNode = gql`
  query Account {
    account {
      id
      name
    }
  }
`

/** Every scalar field of `Job` (the schema subset's `Job` minus its object-valued `client`). */
export const JobFields: DocumentNode = gql`
  fragment JobFields on Job {
    id
    jobNumber
    title
    jobStatus
    jobType
    billingType
    source
    instructions
    defaultVisitTitle
    jobberWebUri
    total
    invoicedTotal
    uninvoicedTotal
    completedAndUninvoicedVisitsCount
    completedAndUninvoicedVisitsTotal
    readyToClose
    allowReviewRequest
    visitGenerationInProgress
    visitReschedulingInProgress
    willClientBeAutomaticallyCharged
    startAt
    endAt
    completedAt
    bookingConfirmationSentAt
    nextDateToSendReviewSms
    pendingInvoiceStartsAt
    createdAt
    updatedAt
  }
`

/** One page of jobs; `sort` picks the order (full pass: JOB_NUMBER ascending, incremental: UPDATED_AT descending). */
export const JobsPageQuery: DocumentNode = gql`
  query JobsPage($first: Int!, $after: String, $sort: [JobsSortInput!]) {
    jobs(first: $first, after: $after, sort: $sort) {
      nodes {
        ...JobFields
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
  ${JobFields}
`

/** Tells the service the user disconnected inside the app; the service invalidates the account's tokens. */
export const AppDisconnectMutation: DocumentNode = gql`
  mutation AppDisconnect {
    appDisconnect {
      app {
        id
        name
      }
      userErrors {
        message
        path
      }
    }
  }
`

/** The documents a test validates against the schema subset. */
export const allDocuments: Readonly<Record<string, DocumentNode>> = {
  AccountQuery,
  JobsPageQuery,
  AppDisconnectMutation
}

/** The name of a document's (first) operation: the key CostBudget corrects its estimates by. */
export const operationName = (document: DocumentNode): string => {
  for (const definition of document.definitions) {
    if (definition.kind === "OperationDefinition") return definition.name?.value ?? "anonymous"
  }
  return "anonymous"
}
