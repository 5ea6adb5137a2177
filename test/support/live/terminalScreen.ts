import { Terminal } from "@xterm/headless"
import { execFile } from "node:child_process"

/** Everything a command printed on a pseudo-terminal, as a terminal shows it. */
export interface Screen {
  /** Every line of the scrollback and the screen, in order, without trailing blanks. */
  readonly lines: ReadonlyArray<string>
  /** Where the terminal continued a line longer than its width on the next one (indexes into `lines`). */
  readonly wrapped: ReadonlyArray<number>
  /** What the screen shows (its last `rows` lines, trailing blank lines dropped). */
  readonly visible: ReadonlyArray<string>
}

/** The screen after a terminal emulator (@xterm/headless) of `cols` x `rows` is fed `bytes`. */
export const render = (bytes: Uint8Array, cols: number, rows: number): Promise<Screen> =>
  new Promise((resolve) => {
    const terminal = new Terminal({ cols, rows, scrollback: 100_000, allowProposedApi: true })
    terminal.write(bytes, () => {
      const buffer = terminal.buffer.active
      const lines: Array<string> = []
      const wrapped: Array<number> = []
      for (let i = 0; i < buffer.length; i++) {
        const line = buffer.getLine(i)!
        if (line.isWrapped) wrapped.push(i)
        lines.push(line.translateToString(true))
      }
      const visible = lines.slice(buffer.baseY, buffer.baseY + rows)
      while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
      while (visible.length > 0 && visible[visible.length - 1] === "") visible.pop()
      terminal.dispose()
      resolve({ lines, wrapped, visible })
    })
  })

/**
 * Runs `command` (a shell command line) on a real pseudo-terminal (util-linux `script`) sized `cols` x `rows`; the
 * bytes it wrote, to render whole or up to any point.
 */
export const runOnTerminal = (command: string, cols: number, rows: number, env: NodeJS.ProcessEnv): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    execFile(
      "script",
      ["-qfec", `stty cols ${cols} rows ${rows}; ${command}`, "/dev/null"],
      { env, maxBuffer: 64 * 1024 * 1024, encoding: "buffer", timeout: 180_000 },
      (error, stdout) => (error ? reject(new Error(`${command} failed on the terminal: ${error.message}\n${stdout.toString("utf8")}`)) : resolve(stdout))
    )
  })

const frameStart = Buffer.from("\x1b[?2026h")
const frameEnd = Buffer.from("\x1b[?2026l")

/**
 * The bytes up to the end of the frame that printed `text` (ink draws each frame between the two markers of
 * synchronized output, the printed text and the live region it redraws below it): the screen right after it.
 */
export const untilFrameWith = (bytes: Buffer, text: string): Buffer => {
  const at = bytes.indexOf(text)
  if (at < 0) throw new Error(`the output never printed ${JSON.stringify(text)}`)
  const end = bytes.indexOf(frameEnd, Math.max(at, bytes.lastIndexOf(frameStart, at)))
  return bytes.subarray(0, end < 0 ? bytes.length : end + frameEnd.length)
}

/** The bytes up to the end of each frame drawn after `from` was printed and before `to` was: the screens in between. */
export const framesBetween = (bytes: Buffer, from: string, to: string): ReadonlyArray<Buffer> => {
  const start = bytes.indexOf(from)
  const stop = bytes.indexOf(to, start)
  if (start < 0 || stop < 0) throw new Error(`the output never printed ${JSON.stringify(start < 0 ? from : to)}`)
  const out: Array<Buffer> = []
  for (let end = bytes.indexOf(frameEnd, start); end >= 0 && end < stop; end = bytes.indexOf(frameEnd, end + 1)) {
    out.push(bytes.subarray(0, end + frameEnd.length))
  }
  return out
}
