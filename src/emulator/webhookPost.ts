import { Worker } from "node:worker_threads"

/**
 * The webhook sender's own thread: it makes the POSTs and times each answer on a loop that does nothing else. On the
 * emulator's loop, a GraphQL page it executes for a backfill held every answer in flight until it was done, and the
 * time measured at the sender was that page's, not the receiver's. Plain JavaScript (node:http, connections kept alive
 * and reused; each dropped after 4 s idle, before a receiver's usual 5 s keep-alive closes it under a request).
 */
const senderSource = `
const http = require("node:http")
const https = require("node:https")
const { parentPort } = require("node:worker_threads")
const agents = { "http:": new http.Agent({ keepAlive: true, timeout: 4000 }), "https:": new https.Agent({ keepAlive: true, timeout: 4000 }) }
parentPort.on("message", ({ id, url, headers, body, timeoutMs }) => {
  let done = false
  const finish = (answer) => { if (!done) { done = true; parentPort.postMessage({ id, ...answer }) } }
  try {
    const target = new URL(url)
    const agent = agents[target.protocol]
    if (agent === undefined) return finish({ error: "unsupported protocol " + target.protocol })
    const payload = Buffer.from(body)
    const started = performance.now()
    const signal = AbortSignal.timeout(timeoutMs)
    const request = (target.protocol === "https:" ? https : http).request(target, {
      method: "POST",
      agent,
      headers: { ...headers, "content-length": String(payload.length) },
      signal
    })
    request.once("response", (response) => {
      response.resume()
      finish({ status: response.statusCode || 0, answerMs: performance.now() - started })
    })
    request.once("error", (e) => finish({ error: signal.aborted ? "no answer within " + timeoutMs + " ms" : e && e.message ? e.message : String(e) }))
    request.end(payload)
  } catch (e) {
    finish({ error: e && e.message ? e.message : String(e) })
  }
})
`

export interface WebhookAnswer {
  readonly status: number
  /** From the request's start to the answer's headers, timed on the sender's thread. */
  readonly answerMs: number
}

type Pending = { readonly resolve: (answer: WebhookAnswer) => void; readonly reject: (error: Error) => void }

let sender: { readonly worker: Worker; readonly pending: Map<number, Pending> } | undefined
let nextId = 0

/** The process's one sender thread, started at the first delivery; it never keeps the process alive. */
const senderThread = () => {
  if (sender !== undefined) return sender
  const worker = new Worker(senderSource, { eval: true })
  const pending = new Map<number, Pending>()
  const current = { worker, pending }
  worker.on("message", (answer: { id: number; status?: number; answerMs?: number; error?: string }) => {
    const waiting = pending.get(answer.id)
    if (waiting === undefined) return
    pending.delete(answer.id)
    if (answer.error !== undefined) waiting.reject(new Error(answer.error))
    else waiting.resolve({ status: answer.status ?? 0, answerMs: answer.answerMs ?? 0 })
  })
  const failAll = (error: Error) => {
    if (sender === current) sender = undefined
    for (const waiting of pending.values()) waiting.reject(error)
    pending.clear()
  }
  worker.on("error", failAll)
  worker.on("exit", (code) => failAll(new Error(`the webhook sender's thread exited with ${code}`)))
  worker.unref()
  sender = current
  return current
}

/** POSTs `body` from the sender's thread; its answer's status (its body is read and dropped), or why none came within `timeoutMs`. */
export const postWebhook = (url: string, headers: Readonly<Record<string, string>>, body: string, timeoutMs: number): Promise<WebhookAnswer> =>
  new Promise((resolve, reject) => {
    const { worker, pending } = senderThread()
    const id = nextId++
    pending.set(id, { resolve, reject })
    worker.postMessage({ id, url, headers, body, timeoutMs })
  })
