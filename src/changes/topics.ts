import type { AnyStream } from "../sync/streams/Stream.js"

/** What a change event's topic says: which stream's record, and whether it is gone or changed. */
export interface ChangeTopic {
  readonly stream: AnyStream
  /** `*_DESTROY`: the record is gone; any other topic of the collection (CREATE, UPDATE, CLOSED, SENT...): read it again. */
  readonly destroyed: boolean
}

/** The stream whose topic prefix the topic has (`JOB_UPDATE` -> jobs), or undefined (APP_CONNECT, PAYMENT_CREATE...). */
export const changeOf = (topic: string, streams: ReadonlyArray<AnyStream>): ChangeTopic | undefined => {
  let best: AnyStream | undefined
  for (const stream of streams) {
    if (stream.topic === undefined || !topic.startsWith(`${stream.topic}_`)) continue
    if (best === undefined || stream.topic.length > best.topic!.length) best = stream
  }
  return best === undefined ? undefined : { stream: best, destroyed: topic === `${best.topic}_DESTROY` }
}
