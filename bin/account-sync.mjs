#!/usr/bin/env -S node --max-semi-space-size=8
// --max-semi-space-size=8 (MB, V8's young generation; fixed when the heap is set up, so it is a start flag: this line,
// the Dockerfile's ENTRYPOINT and `npm run demo` carry it): a sync allocates a page's objects by the megabyte, and
// with Node 24's default of up to 32 MB per semi-space the young generation alone held ~90 MB of a 100,000-job
// backfill's 334 MB peak RSS; at 8 MB the same backfill runs as fast.
import { ensureBundle } from "./bundle.mjs"

await import(ensureBundle())
