import { Layer } from "effect"
import { GraphqlTransportLive } from "../api/GraphqlTransport.js"
import { AccessTokensLive } from "../auth/AccessTokens.js"
import { AccountApiLive } from "../auth/AccountApi.js"
import { AnonymousLimitsLive } from "../auth/AnonymousLimits.js"
import { ConnectionsLive } from "../auth/Connections.js"
import { EventQueueLive } from "../changes/EventQueue.js"
import { EventInboxLive } from "../changes/EventInbox.js"
import { OAuthFlowLive } from "../auth/OAuthFlow.js"
import { PendingFlowsLive } from "../auth/PendingFlows.js"
import { TokenCipherLive } from "../auth/TokenCipher.js"
import { TokenEndpointLive } from "../auth/TokenEndpoint.js"
import { TokenStoreLive } from "../auth/TokenStore.js"

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
