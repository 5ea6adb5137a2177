import { FetchHttpClient, HttpClient, HttpClientError } from "@effect/platform"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import { RpcClientError } from "@effect/rpc/RpcClientError"
import { Duration, Effect, Layer, type Scope } from "effect"
import { AdminRpcs, type EmulatorAdmin, EmulatorAdminError } from "./EmulatorAdmin.js"

/**
 * The admin API over HTTP, for the demo, benchmarks and child processes: the RPC client of AdminRpcs, each call
 * `POST {baseUrl}/__admin` (the emulator must run with `--admin`), timed out after 30 s. A call that fails on the way
 * fails as the operation's EmulatorAdminError, saying what went wrong, like a refused one.
 */

export const ADMIN_PATH = "/__admin" as const
const CALL_TIMEOUT = Duration.seconds(30)

/** Fetch, with a timeout per call and an HTTP error status as a failure (not a body the protocol cannot read). */
const httpClient = (baseUrl: string) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) =>
      client.pipe(
        HttpClient.transform((response, request) =>
          response.pipe(
            Effect.timeoutFail({
              duration: CALL_TIMEOUT,
              onTimeout: () => new HttpClientError.RequestError({ request, reason: "Transport", description: `no answer from ${baseUrl} within ${Duration.format(CALL_TIMEOUT)}` })
            }),
            Effect.filterOrElse(
              (r) => r.status >= 200 && r.status < 300,
              (r) =>
                Effect.fail(
                  new HttpClientError.ResponseError({
                    request,
                    response: r,
                    reason: "StatusCode",
                    description: `HTTP ${r.status}${r.status === 404 ? ` at ${baseUrl}${ADMIN_PATH} (is the emulator running with --admin?)` : ""}`
                  })
                )
            )
          )
        )
      )
    )
  ).pipe(Layer.provide(FetchHttpClient.layer))

const describe = (cause: unknown): string =>
  cause instanceof HttpClientError.ResponseError || cause instanceof HttpClientError.RequestError
    ? (cause.description ?? cause.message)
    : cause instanceof Error
      ? cause.message
      : String(cause)

export const EmulatorAdminClient = {
  /** The client for the emulator at `baseUrl`, for as long as the scope lasts. */
  make: (baseUrl: string): Effect.Effect<EmulatorAdmin, never, Scope.Scope> =>
    Effect.gen(function* () {
      const base = baseUrl.replace(/\/+$/, "")
      const protocol = yield* Layer.build(
        RpcClient.layerProtocolHttp({ url: `${base}${ADMIN_PATH}` }).pipe(Layer.provide(Layer.merge(httpClient(base), RpcSerialization.layerJson)))
      )
      const client = yield* Effect.provide(RpcClient.make(AdminRpcs), protocol)
      // every operation alike: a failure on the way becomes the operation's EmulatorAdminError
      const calls = Object.entries(client as unknown as Record<string, (payload: unknown, options?: unknown) => Effect.Effect<unknown, unknown>>).map(
        ([operation, call]) =>
          [
            operation,
            (payload: unknown, options?: unknown) =>
              call(payload, options).pipe(
                Effect.catchIf(
                  (e): e is RpcClientError => e instanceof RpcClientError,
                  (e) => Effect.fail(new EmulatorAdminError({ operation, reason: `${e.message}: ${describe(e.cause)}` }))
                )
              )
          ] as const
      )
      return Object.fromEntries(calls) as unknown as EmulatorAdmin
    })
}
