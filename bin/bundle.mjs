// The program runs from one ESM bundle of src/ and the packages it uses (esbuild), rebuilt whenever a source file or
// the lockfile is newer than it: one path for dev, tests and the container, and plain Node at run time (no
// TypeScript loader in memory). Bundling the packages keeps only the parts of them the program uses (importing the
// `effect` index alone costs ~40 MB of heap and start-up); PGlite and libpg-query stay external, they load their WebAssembly
// (and data) files from beside their own modules. The bundle sits two levels below the root, like the sources, so the files they
// find relative to themselves (sql/, schema/) resolve the same way.
import { buildSync } from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const source = path.join(root, "src")
const output = path.join(root, "dist", "app", "main.mjs")

const lockfile = path.join(root, "package-lock.json")

const newestSource = (dir) => {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : fs.statSync(full).mtimeMs)
  }
  return newest
}

/** The bundle's URL, (re)built first when it is missing or older than a source file. */
export const ensureBundle = () => {
  const built = fs.existsSync(output) ? fs.statSync(output).mtimeMs : 0
  const newest = Math.max(newestSource(source), fs.existsSync(lockfile) ? fs.statSync(lockfile).mtimeMs : 0)
  if (!fs.existsSync(source) || built >= newest) return pathToFileURL(output).href
  fs.mkdirSync(path.dirname(output), { recursive: true })
  // several processes may start at once: each writes its own file, the rename is atomic
  const temporary = `${output}.${process.pid}.tmp`
  buildSync({
    entryPoints: [path.join(source, "main.ts")],
    outfile: temporary,
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
  fs.renameSync(temporary, output)
  return pathToFileURL(output).href
}
