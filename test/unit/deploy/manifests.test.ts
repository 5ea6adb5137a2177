import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { documentsOf, kubernetesDirectory as k8s, manifestFiles, projectRoot as root } from "../../support/manifests.js"
import { schemaErrors } from "../../support/kubernetesSchema.js"

describe("deployment examples", () => {
  it("every Kubernetes manifest is valid YAML with apiVersion, kind and metadata.name", () => {
    const files = manifestFiles()
    expect(files.length).toBeGreaterThanOrEqual(5)
    expect(files).toContain("without-workers/cronjob-sync.yaml")
    for (const file of files) {
      for (const doc of documentsOf(path.join(k8s, file))) {
        expect(doc.apiVersion, file).toBeTypeOf("string")
        expect(doc.kind, file).toBeTypeOf("string")
        expect(doc.metadata?.name, file).toBeTypeOf("string")
      }
    }
  })

  it("every Kubernetes manifest is valid against the Kubernetes API's schema (kubernetes-models: Kubernetes 1.36's OpenAPI)", async () => {
    const invalid: Array<string> = []
    for (const file of manifestFiles()) {
      for (const doc of documentsOf(path.join(k8s, file))) invalid.push(...(await schemaErrors(doc)).map((e) => `${file}: ${doc.kind} ${doc.metadata?.name}: ${e}`))
    }
    expect(invalid).toEqual([])
  })

  it("the schema check finds what kubectl would refuse: a wrong type, a missing required field, an unknown kind", async () => {
    const [deployment] = documentsOf(path.join(k8s, "deployment-workers.yaml"))
    const broken = structuredClone(deployment!)
    broken.spec.replicas = "3"
    delete broken.spec.selector
    broken.spec.template.spec.containers[0].ports[0].containerPort = "9090"
    expect(await schemaErrors(broken)).toEqual([
      "/spec must have required property selector",
      "/spec/replicas must be integer",
      "/spec/template/spec/containers/0/ports/0/containerPort must be integer"
    ])
    expect(await schemaErrors({ ...deployment!, apiVersion: "apps/v1beta9" })).toEqual(["apps/v1beta9 Deployment is not a kind of the Kubernetes API"])
  })

  it("workers: a Deployment of N `worker` replicas that outlives a page on SIGTERM, a PodDisruptionBudget over them, serve enqueuing for them and no CronJob beside them", () => {
    const [deployment, budget] = documentsOf(path.join(k8s, "deployment-workers.yaml"))
    expect(deployment!.kind).toBe("Deployment")
    expect(deployment!.spec.replicas).toBeGreaterThanOrEqual(2)
    const pod = deployment!.spec.template.spec
    expect(pod.containers[0].args[0]).toBe("worker")
    expect(pod.containers[0].args).toContain("--concurrency")
    // a page in flight lands within a minute (GRAPHQL_REQUEST_TIMEOUT 30 s and one landing statement)
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60)
    const metricsPort = pod.containers[0].env.find((e: { name: string }) => e.name === "METRICS_PORT").value
    expect(pod.containers[0].readinessProbe.httpGet.port).toBe(Number(metricsPort))
    expect(budget!.kind).toBe("PodDisruptionBudget")
    expect(budget!.spec.selector.matchLabels).toEqual(deployment!.spec.selector.matchLabels)
    expect(budget!.spec.maxUnavailable ?? 0).toBeLessThan(deployment!.spec.replicas)
    const [serve] = documentsOf(path.join(k8s, "deployment-serve.yaml"))
    expect(serve!.spec.template.spec.containers[0].env).toContainEqual({ name: "WORKERS", value: "true" })
    const kinds = fs
      .readdirSync(k8s)
      .filter((f) => f.endsWith(".yaml"))
      .flatMap((f) => documentsOf(path.join(k8s, f)).map((d) => d.kind))
    expect(kinds).not.toContain("CronJob")
  })

  it("without workers: the sync CronJob forbids overlapping runs and runs `sync`", () => {
    const [cron] = documentsOf(path.join(k8s, "without-workers/cronjob-sync.yaml"))
    expect(cron!.kind).toBe("CronJob")
    expect(cron!.spec.concurrencyPolicy).toBe("Forbid")
    expect(cron!.spec.jobTemplate.spec.template.spec.containers[0].args).toEqual(["sync"])
  })

  it("the backfill Job runs `backfill`; the serve Deployment probes /healthz and /readyz", () => {
    const [job] = documentsOf(path.join(k8s, "job-backfill.yaml"))
    expect(job!.kind).toBe("Job")
    expect(job!.spec.template.spec.containers[0].args).toEqual(["backfill"])
    const [deployment] = documentsOf(path.join(k8s, "deployment-serve.yaml"))
    const container = deployment!.spec.template.spec.containers[0]
    expect(container.livenessProbe.httpGet.path).toBe("/healthz")
    expect(container.readinessProbe.httpGet.path).toBe("/readyz")
  })

  it("docker-compose has postgres, serve and a one-shot sync", () => {
    const [compose] = documentsOf(path.join(root, "docker-compose.yml"))
    expect(Object.keys(compose!.services).sort()).toEqual(["postgres", "serve", "sync"])
    expect(compose!.services.sync.command).toEqual(["sync"])
  })

  it("docker-compose: serve and sync log in as the role that owns only the schema, query as the reader; the superuser's password stays with postgres", () => {
    const [compose] = documentsOf(path.join(root, "docker-compose.yml"))
    const { postgres, serve, sync } = compose!.services
    expect(postgres.volumes).toEqual(
      expect.arrayContaining([
        "./config/postgres/roles.sql:/account-sync/roles.sql:ro",
        "./config/postgres/init-roles.sh:/docker-entrypoint-initdb.d/10-account-sync-roles.sh:ro"
      ])
    )
    expect(postgres.env_file).toBe("config/postgres/superuser.env")
    expect(postgres.environment.POSTGRES_PASSWORD).toBeUndefined()
    for (const service of [serve, sync]) {
      expect(new URL(service.environment.DATABASE_URL).username).toBe("account_sync")
      expect(new URL(service.environment.QUERY_DATABASE_URL).username).toBe("account_sync_reader")
      expect([service.env_file].flat()).toEqual([".env"])
    }
    expect(fs.statSync(path.join(root, "config/postgres/init-roles.sh")).mode & 0o111).not.toBe(0)
    for (const ignore of [".gitignore", ".dockerignore"]) {
      expect(fs.readFileSync(path.join(root, ignore), "utf8").split("\n")).toContain("config/postgres/superuser.env")
    }
  })

  it("the crontab line runs `account-sync sync` every 15 minutes", () => {
    const lines = fs.readFileSync(path.join(root, "config/crontab"), "utf8").split("\n").filter((l) => /^\S+ \S+ \S+ \S+ \S+ /.test(l) && !l.startsWith("#") && !/^[A-Z_]+=/.test(l))
    expect(lines.some((l) => l.startsWith("*/15 * * * *") && l.includes("account-sync sync"))).toBe(true)
  })
})
