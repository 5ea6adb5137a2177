/**
 * Writes what is generated from the stream definitions: the README's data model, the table of streams in docs/streams.md
 * (each between its markers) and
 * the dbt project's sources and staging models (config/dbt/models).   npm run docs
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
