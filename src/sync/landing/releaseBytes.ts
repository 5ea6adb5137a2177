/**
 * Gives back the memory of bytes that will not be read again now, instead of at a later garbage collection: the
 * buffer is detached (`transfer(0)`, ES2024) and its backing store freed at once; a view of it then has length 0.
 * Only a buffer that owns all of its ArrayBuffer is released (Node hands out small Buffers as slices of a shared
 * pool, which other Buffers use too); an empty or already released one is left as it is.
 *
 * Why: a backfill makes a page body (~90 KB) a page and a batch's statement parameter (~2 MB) a batch, and V8 frees
 * them only when it collects their objects, which under a backfill's allocation rate came seconds later: the process
 * held tens of MB of such bytes, and once glibc's arenas had grown to hold them they never shrank.
 */
export const releaseBytes = (bytes: Uint8Array): void => {
  const buffer = bytes.buffer
  if (!(buffer instanceof ArrayBuffer) || bytes.byteLength === 0 || bytes.byteOffset !== 0 || bytes.byteLength !== buffer.byteLength) return
  buffer.transfer(0)
}
