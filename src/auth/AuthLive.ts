import { Layer } from "effect"
import { GraphqlTransportLive } from "../api/GraphqlTransport.js"
import { AccessTokensLive } from "./AccessTokens.js"
import { AccountApiLive } from "./AccountApi.js"
import { AnonymousLimitsLive } from "./AnonymousLimits.js"
import { ConnectionsLive } from "./Connections.js"
import { EventQueueLive } from "../events/EventQueue.js"
import { EventInboxLive } from "./EventInbox.js"
import { OAuthFlowLive } from "./OAuthFlow.js"
import { PendingFlowsLive } from "./PendingFlows.js"
import { TokenCipherLive } from "./TokenCipher.js"
import { TokenEndpointLive } from "./TokenEndpoint.js"
import { TokenStoreLive } from "./TokenStore.js"

/**
 * Every auth service, and the event queue the webhook inbox records into (the sync engine's consumer reads it), over
 * the OAuthClient, the TokenKey, a database (SqlClient), the ServiceEndpoint and an HttpClient, all supplied by the
 * caller (the application is assembled in cli/app.ts).
 */
export const AuthServicesLive = Layer.mergeAll(OAuthFlowLive, EventInboxLive, AccessTokensLive).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      TokenEndpointLive,
      AccountApiLive.pipe(Layer.provide(GraphqlTransportLive)),
      PendingFlowsLive,
      ConnectionsLive,
      EventQueueLive
    )
  ),
  Layer.provideMerge(TokenStoreLive),
  Layer.provideMerge(Layer.merge(TokenCipherLive, AnonymousLimitsLive))
)
