import { HttpServerResponse } from "@effect/platform"

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/** A small, self-contained HTML page: a title and one paragraph. Never a stack trace. */
export const page = (status: number, title: string, text: string) =>
  HttpServerResponse.text(
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} - account-sync</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>
`,
    { status, contentType: "text/html; charset=utf-8", headers: { "cache-control": "no-store" } }
  )
