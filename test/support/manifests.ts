import { expect } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { parseAllDocuments } from "yaml"

export const projectRoot = path.resolve(import.meta.dirname, "../..")
export const kubernetesDirectory = path.join(projectRoot, "config/kubernetes")

/** Every document of a YAML file, as plain values (a parse error fails the test, naming the file). */
export const documentsOf = (file: string): Array<Record<string, any>> => {
  const docs = parseAllDocuments(fs.readFileSync(file, "utf8"))
  for (const doc of docs) expect(doc.errors, `${file}: ${doc.errors.join("; ")}`).toEqual([])
  return docs.map((d) => d.toJS() as Record<string, any>)
}

/** Every manifest under config/kubernetes (its subfolders too), relative to it. */
export const manifestFiles = (): Array<string> =>
  fs
    .readdirSync(kubernetesDirectory, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".yaml"))
    .sort()

/**
 * The first container of the pod that `file`'s first document runs: its arguments, and its environment as the pod
 * gets it (the Secret's keys, `envFrom`, then its own `env` values over them).
 */
export const podContainerOf = (file: string): { readonly args: ReadonlyArray<string>; readonly env: Record<string, string>; readonly secretKeys: Record<string, string> } => {
  const [workload] = documentsOf(path.join(kubernetesDirectory, file))
  const container = workload!.spec.template.spec.containers[0]
  const [secret] = documentsOf(path.join(kubernetesDirectory, "secret.example.yaml"))
  const fromSecret = (container.envFrom ?? []).some((e: { secretRef?: { name: string } }) => e.secretRef?.name === secret!.metadata.name)
  const env: Record<string, string> = {}
  for (const e of container.env ?? []) env[e.name] = String(e.value)
  return { args: container.args, env, secretKeys: fromSecret ? (secret!.stringData as Record<string, string>) : {} }
}
