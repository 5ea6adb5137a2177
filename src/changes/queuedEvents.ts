/** The change-event queue's records as its callers see them (EventQueue). */

/** A verified delivery, as the inbox hands it over. */
export interface ReceivedEvent {
  /** The hash of what it says: a redelivery is the same event. */
  readonly eventId: string
  readonly topic: string
  readonly appId: string
  /** The connection it matched; null: none did (kept as `unmatched`, shown by `status`). */
  readonly accountId: string | null
  /** The account id as the delivery spelled it. */
  readonly sentAccountId: string
  readonly itemId: string
  /** The service's time of the change (whole seconds). */
  readonly occurredAt: Date
  readonly receivedAt: Date
  /** Applied as it was recorded (APP_DISCONNECT, in the caller's transaction). */
  readonly applied: boolean
}

/** What a queued change event is to the consumer. */
export interface QueuedEvent {
  readonly id: string
  readonly topic: string
  readonly itemId: string
  readonly occurredAt: Date
  readonly attempts: number
}

/** Where an account's change events stand (`status`). */
export interface AccountEvents {
  readonly accountId: string
  /** Pending, those waiting for a reconnect included. */
  readonly waiting: number
  /** Pending until the account is connected again (it was revoked or disconnected when they came due). */
  readonly waitingForReconnect: number
  readonly oldestWaitingSince: Date | null
  readonly lastApplied: { readonly topic: string; readonly itemId: string; readonly appliedAt: Date } | null
  readonly failed: number
  readonly lastError: string | null
  readonly deferred: number
}

/** Deliveries for account ids no connection matches (`status`): recorded, never an error to the service. */
export interface UnmatchedAccount {
  readonly sentAccountId: string
  readonly events: number
  readonly lastReceivedAt: Date
}
