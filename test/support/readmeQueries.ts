import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")

/** Every ```sql block of the README: what the README tells users to run. */
export const readmeQueries = (): ReadonlyArray<string> => {
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
  return [...readme.matchAll(/```sql\n([\s\S]*?)```/g)].map((match) => match[1]!.trim())
}
