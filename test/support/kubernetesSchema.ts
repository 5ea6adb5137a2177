/**
 * A manifest checked against the Kubernetes API's schema: the models of `kubernetes-models` (an npm package, pinned;
 * 5.x carries the OpenAPI schema of Kubernetes 1.36, compiled to ajv validators), one per apiVersion and kind.
 * Like the API server without field validation, it does not refuse fields the schema does not name.
 */
interface Validating {
  validate(): void
}

/** The schema's complaints about `manifest`, one line each ("/spec/replicas must be integer"); none when valid. */
export const schemaErrors = async (manifest: Record<string, any>): Promise<Array<string>> => {
  const { apiVersion, kind } = manifest as { apiVersion: string; kind: string }
  let model: new (data: unknown) => Validating
  try {
    // core kinds ("v1") are at kubernetes-models/v1/<Kind>, the others at kubernetes-models/<group>/<version>/<Kind>
    model = ((await import(`kubernetes-models/${apiVersion}/${kind}`)) as Record<string, new (data: unknown) => Validating>)[kind]!
  } catch {
    return [`${apiVersion} ${kind} is not a kind of the Kubernetes API`]
  }
  try {
    new model(manifest).validate()
    return []
  } catch (error) {
    const errors = (error as { errors?: ReadonlyArray<{ instancePath: string; message?: string }> }).errors
    if (errors === undefined) throw error
    return errors.map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}`).sort()
  }
}
