/** How long, for a person: "0.3 s", "42 s", "3 min 5 s", "2 h 10 min", "3 d 4 h". */
export const formatDuration = (ms: number): string => {
  const s = Math.max(0, ms) / 1000
  if (s < 10) return `${s.toFixed(1)} s`
  if (s < 60) return `${Math.round(s)} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`.replace(/ 0 s$/, "")
  const h = Math.floor(m / 60)
  if (h < 48) return `${h} h ${m - h * 60} min`.replace(/ 0 min$/, "")
  const d = Math.floor(h / 24)
  return `${d} d ${h - d * 24} h`.replace(/ 0 h$/, "")
}

/** The coarse unit of a span: "42 s", "3 min", "5 h", "2 d". */
const coarse = (ms: number): string => {
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  const m = Math.round(s / 60)
  if (m < 60) return `${m} min`
  const h = Math.round(m / 60)
  if (h < 48) return `${h} h`
  return `${Math.round(h / 24)} d`
}

/** A time relative to `now`: "just now", "3 min ago", "in 23 h". */
export const relativeTime = (at: Date, now: number): string => {
  const delta = at.getTime() - now
  if (Math.abs(delta) < 1000) return "just now"
  return delta < 0 ? `${coarse(-delta)} ago` : `in ${coarse(delta)}`
}
