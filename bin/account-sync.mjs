#!/usr/bin/env node
import { ensureBundle } from "./bundle.mjs"

await import(ensureBundle())
