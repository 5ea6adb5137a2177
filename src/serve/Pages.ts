import { HttpServerResponse } from "@effect/platform"
import * as crypto from "node:crypto"

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const style = "body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;line-height:1.5}"

/**
 * What every page sends besides itself: nothing may load or run but its one inline style (allowed by its hash),
 * it may not be framed, its type is not sniffed, and no Referer (which could carry the callback's code) leaves it.
 */
export const securityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": `default-src 'none'; style-src 'sha256-${crypto.createHash("sha256").update(style).digest("base64")}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store"
}

/** A small, self-contained HTML page: a title and one paragraph. Never a stack trace. */
export const page = (status: number, title: string, text: string, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.text(
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} - account-sync</title>
<style>${style}</style></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>
`,
    { status, contentType: "text/html; charset=utf-8", headers: { ...securityHeaders, ...headers } }
  )
