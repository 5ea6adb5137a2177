import { NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import { GraphqlTransportLive } from "../api/GraphqlTransport.js"
import { MigratedDatabaseLive } from "../db/Database.js"
import { AccessTokensLive } from "./AccessTokensLive.js"
import { AccountApiLive } from "./AccountApi.js"
import { ConnectionsLive } from "./Connections.js"
import { DisconnectEventsLive } from "./DisconnectEvents.js"
import { OAuthFlowLive } from "./OAuthFlow.js"
import { PendingFlowsLive } from "./PendingFlows.js"
import { ServiceSettingsFromEnv } from "./ServiceSettings.js"
import { TokenCipherLive } from "./TokenCipher.js"
import { TokenEndpointLive } from "./TokenEndpoint.js"
import { TokenStoreLive } from "./TokenStore.js"

/** Every auth service, over a ServiceSettings, a SqlClient and an HttpClient supplied by the caller. */
export const AuthServicesLive = Layer.mergeAll(OAuthFlowLive, DisconnectEventsLive, AccessTokensLive).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      TokenEndpointLive,
      AccountApiLive.pipe(Layer.provide(GraphqlTransportLive)),
      PendingFlowsLive,
      ConnectionsLive
    )
  ),
  Layer.provideMerge(TokenStoreLive),
  Layer.provideMerge(TokenCipherLive)
)

/** The auth services from the environment: migrated database, settings from env, Node's HTTP client. */
export const AuthLive = AuthServicesLive.pipe(
  Layer.provideMerge(ServiceSettingsFromEnv),
  Layer.provideMerge(MigratedDatabaseLive),
  Layer.provideMerge(NodeHttpClient.layerUndici)
)
