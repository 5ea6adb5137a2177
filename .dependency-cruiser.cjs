// Import rules, checked in CI by `npm run lint:deps` (dependency-cruiser). Type-only imports count
// (tsPreCompilationDeps): a circle of types is still a circle a reader must untangle.
//
// Layers, bottom to top: a folder imports only folders below it (or its own). Issue 38; docs/development.md.
const layers = [
  ["observability", "^src/observability/"], // logs, metrics, tracing: infrastructure, importing no feature
  ["settings", "^src/(config|configErrors|schemaName)\\.ts$"], // Config for every setting
  ["db", "^src/db/"], // Postgres client, migrations, read-only sessions, roles
  ["api", "^src/api/"], // the service's GraphQL: transport, client, cost budget
  ["auth", "^src/auth/"], // OAuth, tokens, connections
  ["sync", "^src/sync/"], // the engine: streams, the pass, paging, landing
  ["changes", "^src/changes/"], // change events: receive, queue, apply
  ["run", "^src/run/"], // runs of streams and accounts (applying events between pages)
  ["health", "^src/health/"], // read models and alerts
  ["jobs", "^src/jobs/"], // the queue and the worker, above what they drive
  ["app", "^src/(cli|serve|demo)/|^src/main\\.ts$"] // commands, serve's routes and threads, the demo
]

const layerRules = layers.slice(0, -1).map(([name, from], i) => ({
  name: `layer-${name}`,
  comment: `${name} imports nothing above it (${layers.slice(i + 1).map(([n]) => n).join(", ")})`,
  severity: "error",
  from: { path: from },
  to: { path: layers.slice(i + 1).map(([, p]) => `(${p})`).join("|") }
}))

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "no import circle, type-only imports included",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    ...layerRules,
    {
      name: "streams-are-definitions",
      comment: "a stream's definition depends on strategies and the model, never on the engine that runs it",
      severity: "error",
      from: { path: "^src/sync/streams/" },
      to: { path: "^src/sync/(paging|landing)/|^src/sync/pass/(Checkpoints|PassEnd|Dependents|refetchReader)\\.ts$" }
    },
    {
      name: "connector-without-emulator",
      comment: "nothing in the connector imports the emulator (only the emulator command and the demo start it)",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(emulator|demo)/|^src/cli/emulator\\.ts$" },
      to: { path: "^src/emulator/" }
    },
    {
      name: "emulator-apart",
      comment: "the emulator is a stand-in for the service: it imports nothing of the connector",
      severity: "error",
      from: { path: "^src/emulator/" },
      to: { path: "^src/", pathNot: "^src/emulator/" }
    },
    {
      name: "no-orphans",
      comment: "a source file nothing imports is dead (entry points aside)",
      severity: "error",
      from: { orphan: true, path: "^src/", pathNot: "^src/main\\.ts$|\\.d\\.ts$" },
      to: {}
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
    exclude: { path: "^(node_modules|dist)/" }
  }
}
