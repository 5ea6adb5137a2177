import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Makes `root` and everything under it its owner's alone: directories 0700, files 0600 (symbolic links are left).
 * Only modes are changed, never content; an entry gone meanwhile is skipped, any other failure throws.
 */
export const restrictToOwner = (root: string): void => {
  const visit = (entry: string, stat: fs.Stats) => {
    if (stat.isDirectory()) {
      if ((stat.mode & 0o777) !== 0o700) fs.chmodSync(entry, 0o700)
      for (const child of fs.readdirSync(entry)) {
        const childPath = path.join(entry, child)
        const childStat = fs.lstatSync(childPath, { throwIfNoEntry: false })
        if (childStat !== undefined) visit(childPath, childStat)
      }
    } else if (stat.isFile() && (stat.mode & 0o777) !== 0o600) {
      fs.chmodSync(entry, 0o600)
    }
  }
  visit(root, fs.lstatSync(root))
}
