import type { DocumentNode } from "graphql"
import { gql } from "graphql-tag"
import { Schema } from "effect"

// The GraphQL documents of the account itself (identity, disconnect). Each one validates against the vendored schema
// subset (test/unit/api/documents.test.ts), so what works against the emulator also parses against the real API.

/** Ties a token to its account; also refreshes the account's name at each sync run. */
export const AccountQuery: DocumentNode = gql`
  query Account {
    account {
      id
      name
    }
  }
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

/** The documents of this module (each stream's page query lives with its stream). */
export const allDocuments: Readonly<Record<string, DocumentNode>> = {
  AccountQuery,
  AppDisconnectMutation
}

/** The data of AccountQuery. */
export const AccountData = Schema.Struct({ account: Schema.NullOr(Schema.Struct({ id: Schema.String, name: Schema.String })) })

/** The name of a document's (first) operation: the key CostBudget corrects its estimates by. */
export const operationName = (document: DocumentNode): string => {
  for (const definition of document.definitions) {
    if (definition.kind === "OperationDefinition") return definition.name?.value ?? "anonymous"
  }
  return "anonymous"
}
