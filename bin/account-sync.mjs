#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=8
// MALLOC_ARENA_MAX=2 (glibc's malloc, read before the first allocation, so it is set here): with its default of up
// to 8 arenas a core, the threads of V8 and libuv each keep freed native memory in an arena of their own; two arenas
// take 10 MB off the peak RSS of a backfill (203.5 -> 193.9 MB at 100,000 jobs) for the same time.
// --max-semi-space-size=8 (MB, V8's young generation; fixed when the heap is set up, so it is a start flag: this line,
// the Dockerfile's ENTRYPOINT and `npm run demo` carry it): a sync allocates a page's objects by the megabyte, and
// with Node 24's default of up to 32 MB per semi-space the young generation alone held ~90 MB of a 100,000-job
// backfill's 334 MB peak RSS; at 8 MB the same backfill runs as fast.
import { ensureBundle } from "./bundle.mjs"

await import(ensureBundle())
