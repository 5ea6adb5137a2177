import { Schema } from "effect"
import { fullPassesOnly } from "../pass/Incremental.js"
import { geocodedAddress } from "./addresses.js"
import { DateTime, embedded, Enum } from "./fields.js"
import { define } from "./Stream.js"

/**
 * Users: listed by status (the filter requires one), so the list is the activated users then the deactivated ones.
 * No update time: full passes on their own cadence (and webhooks). Looked up by `userIds`.
 */
export const usersStream = define({
  name: "users",
  connection: "users",
  topic: "USER",
  nodeType: "User",
  fields: {
    id: Schema.NonEmptyString,
    name: embedded({ first: Schema.String, last: Schema.String, full: Schema.String }),
    email: embedded({ raw: Schema.String, isValid: Schema.Boolean }),
    phone: Schema.NullOr(embedded({ raw: Schema.String, friendly: Schema.NullOr(Schema.String), areaCode: Schema.NullOr(Schema.String), countryCode: Schema.NullOr(Schema.String), isValid: Schema.Boolean })),
    address: Schema.NullOr(geocodedAddress),
    status: Enum,
    isAccountAdmin: Schema.Boolean,
    isAccountOwner: Schema.Boolean,
    isCurrentUser: Schema.Boolean,
    isRestricted: Schema.Boolean,
    availableForScheduling: Schema.Boolean,
    assignedColor: Schema.NullOr(Schema.String),
    labourRate: Schema.NullOr(Schema.Number),
    language: Schema.String,
    timezone: Schema.NullOr(Schema.String),
    firstDayOfTheWeek: Enum,
    hasJobberPaymentsSetup: Schema.Boolean,
    franchiseTokenLastFour: Schema.NullOr(Schema.String),
    intercomHash: Schema.NullOr(Schema.String),
    sardineHash: Schema.NullOr(Schema.String),
    mobileReferralsEnabled: Schema.Boolean,
    twoFactorAuthorized: Schema.Boolean,
    receiveBookkeepingNotifications: Schema.Boolean,
    receiveBusinessCoachingEmails: Schema.Boolean,
    receiveEmailErrorMessages: Schema.Boolean,
    receiveEmailSurveys: Schema.Boolean,
    receiveMarketingReminderEmails: Schema.Boolean,
    uuid: Schema.String,
    lastLoginAt: Schema.NullOr(DateTime),
    createdAt: DateTime
  },
  customFields: true,
  fullPass: {},
  partitions: [{ filter: { status: "ACTIVATED" } }, { filter: { status: "DEACTIVATED" } }],
  incremental: fullPassesOnly,
  lookup: (ids) => ({ filter: { userIds: ids } })
})
