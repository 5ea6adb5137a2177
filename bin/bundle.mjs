// The program runs from an ESM bundle of src/ and the packages it uses (esbuild), rebuilt whenever a source file or
// the lockfile is newer than it: one path for dev, tests and the container, and plain Node at run time (no
// TypeScript loader in memory). Bundling the packages keeps only the parts of them the program uses (importing the
// `effect` index alone costs ~40 MB of heap and start-up); PGlite and libpg-query stay external, they load their WebAssembly
// (and data) files from beside their own modules. What only some commands load (pg-boss, the live display, the
// emulator, the demo) sits in chunks of its own: V8 keeps the source of every module it loads, and `--version`
// took 140 MB with one file against 132 MB with chunks. A build sits two levels below the root, like the sources, so
// the files they find relative to themselves (sql/, schema/) resolve the same way.
import { buildSync } from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const source = path.join(root, "src")
const dist = path.join(root, "dist")
/** The newest build: a symbolic link to its directory (`dist/app-<pid>-<time>`), replaced in one rename. */
const current = path.join(dist, "app")
const entry = path.join(current, "main.mjs")

const lockfile = path.join(root, "package-lock.json")

const newestSource = (dir) => {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : fs.statSync(full).mtimeMs)
  }
  return newest
}

/** Builds older than this, other than the newest, are removed (a process running one may still load its chunks). */
const keepOldBuildsMs = 60 * 60 * 1000

const removeOldBuilds = (keep) => {
  for (const name of fs.readdirSync(dist)) {
    const dir = path.join(dist, name)
    if (!/^app-\d+-\d+$/.test(name) || dir === keep) continue
    try {
      if (Date.now() - fs.statSync(dir).mtimeMs > keepOldBuildsMs) fs.rmSync(dir, { recursive: true, force: true })
    } catch {
      // another process removed it first
    }
  }
}

/** The bundle's entry URL, (re)built first when it is missing or older than a source file. */
export const ensureBundle = () => {
  const built = fs.existsSync(entry) ? fs.statSync(entry).mtimeMs : 0
  const newest = Math.max(newestSource(source), fs.existsSync(lockfile) ? fs.statSync(lockfile).mtimeMs : 0)
  // the build's real path: its chunks load from beside it even when dist/app moves on to a newer build meanwhile
  if (!fs.existsSync(source) || built >= newest) return pathToFileURL(fs.realpathSync(entry)).href
  // several processes may start at once: each builds into a directory of its own, and the link moves in one rename
  const build = path.join(dist, `app-${process.pid}-${Date.now()}`)
  buildSync({
    entryPoints: { main: path.join(source, "main.ts") },
    outdir: build,
    splitting: true,
    chunkNames: "[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["@electric-sql/pglite", "@electric-sql/pglite-socket", "libpg-query", "pg-native"],
    // ink loads react-devtools-core only with DEV=true, and it is not installed
    alias: { "react-devtools-core": path.join(root, "bin", "stubs", "react-devtools-core.mjs") },
    // the CommonJS packages inside (pg, ...) require Node's built-in modules
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    // whitespace and syntax minified (names kept, for stack traces): V8 keeps the whole source in memory and the
    // bundle is 11.5 MB as written
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: "error"
  })
  const link = `${current}.${process.pid}.tmp`
  fs.rmSync(link, { force: true })
  fs.symlinkSync(path.basename(build), link)
  // dist/app was a directory before builds had chunks: it goes once
  if (fs.existsSync(current) && !fs.lstatSync(current).isSymbolicLink()) fs.rmSync(current, { recursive: true, force: true })
  fs.renameSync(link, current)
  removeOldBuilds(build)
  return pathToFileURL(path.join(build, "main.mjs")).href
}
