import type * as http from "node:http"

/** A whole answer, built by an endpoint before it is written (so faults can cut it short or drop it). */
export interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export const jsonReply = (status: number, value: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  body: JSON.stringify(value)
})

export const htmlReply = (status: number, body: string): Reply => ({
  status,
  headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  body
})

export const redirectReply = (location: string): Reply => ({
  status: 302,
  headers: { location, "cache-control": "no-store", "content-type": "text/plain; charset=utf-8" },
  body: `Redirecting to ${location}\n`
})

export class BodyTooLarge extends Error {}

export const readBody = (req: http.IncomingMessage, limitBytes = 1_000_000): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (c: Buffer) => {
      size += c.length
      if (size > limitBytes) {
        reject(new BodyTooLarge(`request body larger than ${limitBytes} bytes`))
        req.destroy()
      } else chunks.push(c)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

export const writeReply = (res: http.ServerResponse, reply: Reply): void => {
  const body = Buffer.from(reply.body, "utf8")
  res.writeHead(reply.status, { ...reply.headers, "content-length": String(body.length) })
  res.end(body)
}

/** Status 200-ish headers claiming the whole body, then half of it, then the connection ends. */
export const writeTruncated = (res: http.ServerResponse, reply: Reply): void => {
  const body = Buffer.from(reply.body, "utf8")
  res.writeHead(reply.status, { ...reply.headers, "content-length": String(body.length) })
  res.write(body.subarray(0, Math.max(1, Math.floor(body.length / 2))), () => res.socket?.destroy())
}

export const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")
