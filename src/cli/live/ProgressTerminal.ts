import { Box, type Instance, render, Text } from "ink"
import { Clock, Effect, Layer, Schedule } from "effect"
import { createElement } from "react"
import { Progress, type ProgressSnapshot } from "../../run/Progress.js"
import { cutToWidth } from "../output/text.js"
import { progressLine } from "./progressLine.js"
import { RunEstimate } from "./runEstimate.js"

/** Narrower than this, a line says too little to be worth drawing. */
const narrowest = 20

/**
 * The live display on a terminal: a region at the bottom with one line per account in flight (progressLine), kept
 * by ink. Everything else the program prints (logs, section headers, tables) goes through the console, which ink
 * writes above the region and never erases; lines are cut to the terminal's width (never wrapped, so the region's
 * height is always its number of lines), an account's line goes when its run ends, and the display is erased and
 * taken down whenever no account is in flight (and when the layer's scope closes), so nothing stale stays on the
 * screen. Mounted again at the next report; a command that syncs nothing never draws.
 *
 * Why ink: it is a kept renderer made for exactly this (a live region with output above it, resize handling, CI and
 * non-terminal detection), where our own cursor arithmetic erased the program's output and broke on wrapped lines.
 */
export const ProgressTerminal = Layer.scoped(
  Progress,
  Effect.gen(function* () {
    const inFlight = new Map<string, ProgressSnapshot>()
    let instance: Instance | undefined
    const width = () => Math.max(narrowest, process.stdout.columns || 80)
    const estimate = new RunEstimate()
    const at = (f: (now: number) => void) => Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => f(now)))
    const view = (now: number) => {
      const run = estimate.runLine(now)
      return createElement(
        Box,
        { flexDirection: "column" },
        ...(run === undefined ? [] : [createElement(Text, { key: "run", wrap: "truncate-end" }, cutToWidth(run, width()))]),
        ...[...inFlight.values()].map((s) => createElement(Text, { key: s.accountId, wrap: "truncate-end" }, progressLine(s, now, width(), estimate.estimate(s, now))))
      )
    }
    /**
     * Taken down whenever no account is in flight: between runs nothing is drawn, not even an empty line. The frame
     * ink still holds back (it draws at most 30 a second) is written first, then erased, then ink unmounts: in the
     * other order the held-back frame would be written after the erase and stay on the screen.
     */
    const takeDown = async () => {
      if (instance === undefined) return
      const done = instance
      instance = undefined
      await done.waitUntilRenderFlush()
      done.clear()
      done.unmount()
      await done.waitUntilExit()
    }
    // one drawing at a time: a report must not mount a new display while the last one is being taken down
    const drawing = yield* Effect.makeSemaphore(1)
    const draw = drawing.withPermits(1)(
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.promise(async () => {
          if (inFlight.size === 0) await takeDown()
          else if (instance !== undefined) instance.rerender(view(now))
          else instance = render(view(now), {
            stdout: process.stdout,
            stderr: process.stderr,
            patchConsole: true,
            exitOnCtrlC: false,
            // ProgressAuto decided this is a terminal to draw on; ink's own CI guess would write only the last frame
            interactive: true
          })
        })
      )
    )
    // rates and the time left move while a page waits for the account's budget
    yield* Effect.forkScoped(Effect.repeat(draw, Schedule.spaced("1 second")))
    yield* Effect.addFinalizer(() => drawing.withPermits(1)(Effect.promise(() => (inFlight.clear(), takeDown()))))
    return Progress.of({
      wantsTotals: true,
      report: (s) => Effect.zipRight(at((now) => (inFlight.set(s.accountId, s), estimate.report(s, now))), draw),
      accountEnded: (accountId) => Effect.zipRight(at((now) => (inFlight.delete(accountId), estimate.accountEnded(accountId, now))), draw),
      accountPlanned: (plan) => at((now) => estimate.accountPlanned(plan, now)),
      runPlanned: (plan) => Effect.sync(() => estimate.runPlanned(plan))
    })
  })
)
