// Node 24 or later, checked before anything else loads: imported first by bin/account-sync.mjs, run by `npm test`
// (pretest). On an older Node the program would start and fail later in ways that read as data bugs (a full pass
// ends "buffer.transfer is not a function" on Node 20), so it stops here with one line: the Node it needs, and the
// one command that gets it on this machine. Plain syntax, no imports: it must run on any Node.
const needed = 24
const major = Number(process.versions.node.split(".")[0])
if (!(major >= needed)) {
  const pkg = `node-${process.platform}-${process.arch}@${needed}`
  const get =
    process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64")
      ? `npm install --prefix ~/.node${needed} ${pkg} && export PATH=~/.node${needed}/node_modules/${pkg.replace(/@.*/, "")}/bin:$PATH`
      : process.platform === "darwin"
        ? `brew install node@${needed} && export PATH="$(brew --prefix node@${needed})/bin:$PATH"`
        : `see https://nodejs.org/en/download`
  process.stderr.write(`account-sync needs Node ${needed} or later (this is Node ${process.version}); get it: ${get}\n`)
  process.exit(2)
}
