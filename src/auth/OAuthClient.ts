import { Context, Layer } from "effect"
import { OAuthClientConfig } from "../config.js"

export type OAuthClientShape = OAuthClientConfig

/**
 * The app as an OAuth client of the service: client id and secret, callback URL, the token endpoint's time limit and
 * how early an access token is refreshed.
 */
export class OAuthClient extends Context.Tag("account-sync/OAuthClient")<OAuthClient, OAuthClientShape>() {
  /** From SERVICE_BASE_URL, SERVICE_CLIENT_ID, SERVICE_CLIENT_SECRET, SERVICE_REDIRECT_URI, TOKEN_REQUEST_TIMEOUT, TOKEN_REFRESH_SKEW. */
  static readonly layer = Layer.effect(OAuthClient, OAuthClientConfig)
}
