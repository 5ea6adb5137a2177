#!/usr/bin/env node
// One path for dev, tests and the container: the TypeScript sources run through tsx.
import { register } from "tsx/esm/api"
register()
await import(new URL("../src/main.ts", import.meta.url).href)
