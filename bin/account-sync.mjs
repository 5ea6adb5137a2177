#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=8 --v8-pool-size=2 --heap-growing-percent=30
// MALLOC_ARENA_MAX=2 (glibc's malloc, read before the first allocation, so it is set here): with its default of up
// to 8 arenas a core, the threads of V8 and libuv each keep freed native memory in an arena of their own; two arenas
// take 10 MB off the peak RSS of a backfill (203.5 -> 193.9 MB at 100,000 jobs) for the same time.
// --max-semi-space-size=8 (MB, V8's young generation; fixed when the heap is set up, so it is a start flag: this line,
// the Dockerfile's ENTRYPOINT and `npm run demo` carry it): a sync allocates a page's objects by the megabyte, and
// with Node 24's default of up to 32 MB per semi-space the young generation alone held ~90 MB of a 100,000-job
// backfill's 334 MB peak RSS; at 8 MB the same backfill runs as fast.
// MALLOC_MMAP_THRESHOLD_=131072 (glibc): blocks of 128 KB and more are mapped and given back when freed. Without it
// glibc raises the threshold to the largest block freed so far (a batch's statement parameters, up to 1.5 MB), and
// from then on such blocks come from the arenas, which keep them: the 1,000,000-job backfill's peak RSS grew to
// 231.7 MB (181.0 MB with it). --v8-pool-size=2: two V8 platform threads (concurrent marking and compiling) instead
// of four, each with memory of its own while it works: runs of the 100,000-job backfill fell in two modes, 166-169
// or 205-220 MB, by whether those peaked together; with both settings 167-186 MB in six runs. One thread was tried:
// the backfill's peak was as low, but a worker's heap grew while its one helper marked (peak RSS per worker +15 to
// +35 MB, one worker holding 500 accounts 469 MB against 392).
// --heap-growing-percent=30: after each full collection V8 lets the heap grow to 1.3x what survived it, instead of up
// to 4x by its own heuristics; a growth factor, not a limit (a run that needs more heap, many accounts at once, gets
// it). A sync's live heap is small and flat (~40 MB) and its garbage comes by the megabyte a page. It is a start flag
// because the collections made while the program's modules load set the next limit: set at run time from main (as it
// was), 2 of 5 runs of the 100,000-job backfill went on to 103-105 MB of heap with no full collection for 2 s, and
// peaked at 218 MB; with the flag here, 6 runs of 6 peaked at 170-185 MB (heap at most 76 MB).
// the Node version first (one line and exit 2 on an older one), then the bundle: imported only once the check passed
import "./node-check.mjs"
import { fileURLToPath } from "node:url"

const { ensureBundle } = await import("./bundle.mjs")
const bundle = ensureBundle()
// V8's compiled code of the bundle kept on disk beside it (node:module's compile cache, checked against each file's
// contents, gone with the build): a start compiles the chunks it loads from there instead of from source, 0.45 ->
// 0.37 CPU s for `--help` on a quiet machine. Best effort: where the build's directory is not writable, nothing is cached.
;(await import("node:module")).enableCompileCache?.(fileURLToPath(new URL("compile-cache", bundle)))
await import(bundle)
