import { Context, Layer } from "effect"
import { ServiceEndpointConfig } from "../config.js"

export type ServiceEndpointShape = ServiceEndpointConfig

/** The service's GraphQL endpoint: base URL, API version header, and the time limit of one GraphQL request. */
export class ServiceEndpoint extends Context.Tag("account-sync/ServiceEndpoint")<ServiceEndpoint, ServiceEndpointShape>() {
  /** From SERVICE_BASE_URL, SERVICE_GRAPHQL_VERSION and GRAPHQL_REQUEST_TIMEOUT. */
  static readonly layer = Layer.effect(ServiceEndpoint, ServiceEndpointConfig)
}
