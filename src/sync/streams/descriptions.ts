/**
 * Where the service's own description of a field is wrong, cut off or names the vendor, what its column says instead
 * (its COMMENT, the dbt sources, the README). Keyed by the GraphQL type that declares the field and the field's name;
 * `*` for every type. The rest of the columns keep the service's words.
 */
const mended: Readonly<Record<string, string>> = {
  // says what another field is
  "Job.title": "The title of the job",
  "Quote.title": "The title of the quote",
  // cut off, or a slip in the service's text
  "UserPhone.countryCode": "The country code of the phone number",
  "Quote.quoteStatus": "The current status of the quote",
  "InvoiceAmounts.paymentsTotal": "The total of the payments made on the invoice",
  "ProductOrService.description": "The description of the product or service",
  "User.isRestricted": "Whether the user is an administrator whose account is restricted",
  "User.hasJobberPaymentsSetup": "Whether the user's account has the service's payments set up",
  // says nothing on its own
  "PaymentTerm.id": "The id of the client's payment term",
  "ClientAddress.street": "The street address: its first and second lines together",
  "ProductOrService.defaultUnitCost": "The default unit price of the product or service",
  "ProductOrService.internalUnitCost": "The default internal unit cost of the product or service",
  "ProductOrService.markup": "The default markup of the product or service, in percent",
  "ProductOrService.taxable": "Whether the product or service is taxable",
  "ProductOrService.category": "The category of the product or service",
  "QuantityRange.minQuantity": "The smallest quantity (inclusive) a client can choose when booking the product or service online",
  "QuantityRange.maxQuantity": "The largest quantity (inclusive) a client can choose when booking the product or service online",
  // the only place the vendor's name would surface in a tool that says "the service"
  "*.jobberWebUri": "The URI of the record in the service's web app"
}

/** The description a column of `field` (declared on `type`) carries: the mended one, else the service's. */
export const columnDescription = (type: string, field: string, service: string | undefined): string | undefined =>
  mended[`${type}.${field}`] ?? mended[`*.${field}`] ?? service

/** Every mended description, for the migration that writes them and its test. */
export const mendedFields = (): ReadonlyArray<string> => Object.keys(mended)
