/**
 * Writes what is generated from the stream definitions: the README's table of streams (between its markers) and
 * config/dbt/sources.yml.   npm run docs
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { generatedDocs } from "./lib/generatedDocs.js"

const root = path.resolve(import.meta.dirname, "..")
for (const [file, text] of Object.entries(generatedDocs(root))) {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
  fs.writeFileSync(path.join(root, file), text)
  console.log(`wrote ${file}`)
}
