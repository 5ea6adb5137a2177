-- Every collection of the service as a stream (src/sync/streams/): a table per stream named after its root field,
-- a table per line item connection, one table of custom fields. No foreign keys (rows land independently, in any
-- order); every link is indexed. Every data column is nullable (a field excluded by SYNC_EXCLUDE_FIELDS stays null).
-- Drafted by scripts/stream-ddl.ts from the stream definitions and the schema's descriptions, then reviewed.

-- users
CREATE TABLE users (
  account_id text NOT NULL,
  id text NOT NULL,
  name_first text,
  name_last text,
  name_full text,
  email_raw text,
  email_is_valid boolean,
  phone_raw text,
  phone_friendly text,
  phone_area_code text,
  phone_country_code text,
  phone_is_valid boolean,
  address_street text,
  address_street1 text,
  address_street2 text,
  address_city text,
  address_province text,
  address_postal_code text,
  address_country text,
  address_name text,
  address_geo_status text,
  address_coordinates_latitude double precision,
  address_coordinates_longitude double precision,
  status text,
  is_account_admin boolean,
  is_account_owner boolean,
  is_current_user boolean,
  is_restricted boolean,
  available_for_scheduling boolean,
  assigned_color text,
  labour_rate double precision,
  language text,
  timezone text,
  first_day_of_the_week text,
  has_jobber_payments_setup boolean,
  franchise_token_last_four text,
  intercom_hash text,
  sardine_hash text,
  mobile_referrals_enabled boolean,
  two_factor_authorized boolean,
  receive_bookkeeping_notifications boolean,
  receive_business_coaching_emails boolean,
  receive_email_error_messages boolean,
  receive_email_surveys boolean,
  receive_marketing_reminder_emails boolean,
  uuid text,
  last_login_at timestamptz,
  created_at timestamptz,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
COMMENT ON TABLE users IS 'User: A user belongs to an account and generally completes work for clients';
COMMENT ON COLUMN users.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN users.id IS 'The unique identifier';
COMMENT ON COLUMN users.name_first IS 'The first name of the person';
COMMENT ON COLUMN users.name_last IS 'The last name of the person';
COMMENT ON COLUMN users.name_full IS 'The full name of the person';
COMMENT ON COLUMN users.email_raw IS 'The email address as stored (may be standard or what was entered by user)';
COMMENT ON COLUMN users.email_is_valid IS 'Is the email address valid';
COMMENT ON COLUMN users.phone_raw IS 'The phone number as stored (may be standard or what was entered by user)';
COMMENT ON COLUMN users.phone_friendly IS 'A user friendly representation of the phone number';
COMMENT ON COLUMN users.phone_area_code IS 'The area code of the phone number';
COMMENT ON COLUMN users.phone_country_code IS 'The country code of the';
COMMENT ON COLUMN users.phone_is_valid IS 'Is the phone number valid';
COMMENT ON COLUMN users.address_street IS 'The street address';
COMMENT ON COLUMN users.address_street1 IS 'The first line of the street address';
COMMENT ON COLUMN users.address_street2 IS 'The second line of the street address';
COMMENT ON COLUMN users.address_city IS 'The city of the address';
COMMENT ON COLUMN users.address_province IS 'The province of the address';
COMMENT ON COLUMN users.address_postal_code IS 'The postal code of the address';
COMMENT ON COLUMN users.address_country IS 'The country of the address';
COMMENT ON COLUMN users.address_name IS 'The name of the property for the address';
COMMENT ON COLUMN users.address_geo_status IS 'The status of geo-locating the coordinates for an address';
COMMENT ON COLUMN users.address_coordinates_latitude IS 'The geographic coordinate that specifies the north-south position of a point on the Earth''s surface';
COMMENT ON COLUMN users.address_coordinates_longitude IS 'The geographic coordinate that specifies the east-west position of a point on the Earth''s surface';
COMMENT ON COLUMN users.status IS 'The status of the user';
COMMENT ON COLUMN users.is_account_admin IS 'Is the user an administrator on their account';
COMMENT ON COLUMN users.is_account_owner IS 'Is the user the owner of their account';
COMMENT ON COLUMN users.is_current_user IS 'Is this the authenticated user querying';
COMMENT ON COLUMN users.is_restricted IS 'Is this user and admin and is their account restricted?';
COMMENT ON COLUMN users.available_for_scheduling IS 'Whether the user is available for scheduling';
COMMENT ON COLUMN users.assigned_color IS 'The color assigned to the user';
COMMENT ON COLUMN users.labour_rate IS 'The labour rate of the user';
COMMENT ON COLUMN users.language IS 'The locale preference of the user';
COMMENT ON COLUMN users.timezone IS 'The timezone of the user''s account';
COMMENT ON COLUMN users.first_day_of_the_week IS 'The first day of the week of the user''s account';
COMMENT ON COLUMN users.has_jobber_payments_setup IS 'Does this user''s account account have jobber payments setup';
COMMENT ON COLUMN users.franchise_token_last_four IS 'Returns the last four characters of the franchise access token for the user if one exists';
COMMENT ON COLUMN users.intercom_hash IS 'The intercom hash for the user';
COMMENT ON COLUMN users.sardine_hash IS 'The sardine hash for the user';
COMMENT ON COLUMN users.mobile_referrals_enabled IS 'Can this user make referrals via the mobile app.';
COMMENT ON COLUMN users.two_factor_authorized IS 'Does the user have a valid 2fa authorization.';
COMMENT ON COLUMN users.receive_bookkeeping_notifications IS 'Should this user receive bookkeeping task notification emails.';
COMMENT ON COLUMN users.receive_business_coaching_emails IS 'Should this user receive business coaching emails.';
COMMENT ON COLUMN users.receive_email_error_messages IS 'Should this user receive email errors.';
COMMENT ON COLUMN users.receive_email_surveys IS 'Should this user receive email surveys.';
COMMENT ON COLUMN users.receive_marketing_reminder_emails IS 'Should this user receive marketing reminder emails.';
COMMENT ON COLUMN users.uuid IS 'The uuid of the user';
COMMENT ON COLUMN users.last_login_at IS 'The date the user logged in last';
COMMENT ON COLUMN users.created_at IS 'The time the user was created';
COMMENT ON COLUMN users.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN users.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN users.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN users.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

-- products
CREATE TABLE products (
  account_id text NOT NULL,
  id text NOT NULL,
  name text,
  description text,
  category text,
  default_unit_cost double precision,
  internal_unit_cost double precision,
  markup double precision,
  taxable boolean,
  visible boolean,
  duration_minutes integer,
  bookable_type text,
  online_bookings_enabled boolean,
  online_booking_sort_order integer,
  quantity_range_min_quantity integer,
  quantity_range_max_quantity integer,
  quantity_range_quantity_enabled boolean,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
COMMENT ON TABLE products IS 'ProductOrService: The collection of attributes that represent a product or service';
COMMENT ON COLUMN products.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN products.id IS 'The unique identifier';
COMMENT ON COLUMN products.name IS 'The name of the product or service';
COMMENT ON COLUMN products.description IS 'The description of product or service';
COMMENT ON COLUMN products.category IS 'The item''s category';
COMMENT ON COLUMN products.default_unit_cost IS 'A product or service has a default price';
COMMENT ON COLUMN products.internal_unit_cost IS 'A product or service has a default internal unit cost';
COMMENT ON COLUMN products.markup IS 'A product or service has a default markup';
COMMENT ON COLUMN products.taxable IS 'A product or service can be taxable or non-taxable';
COMMENT ON COLUMN products.visible IS 'A ''visible'' product or service will show up as an autocomplete suggestion on quotes/jobs/invoice line items';
COMMENT ON COLUMN products.duration_minutes IS 'The duration of the service in minutes';
COMMENT ON COLUMN products.bookable_type IS 'The type of booking to be created in online booking for the product or service';
COMMENT ON COLUMN products.online_bookings_enabled IS 'Whether the service is enabled on the booking page';
COMMENT ON COLUMN products.online_booking_sort_order IS 'Sort order of the service on the booking page';
COMMENT ON COLUMN products.quantity_range_min_quantity IS 'The minimum quantity (inclusive) an SC can select when booking this product or service';
COMMENT ON COLUMN products.quantity_range_max_quantity IS 'The maximum quantity (inclusive) an SC can select when booking this product or service';
COMMENT ON COLUMN products.quantity_range_quantity_enabled IS 'True if the quantity range will be used when booking this product or service, false otherwise';
COMMENT ON COLUMN products.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN products.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN products.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN products.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

-- clients
CREATE TABLE clients (
  account_id text NOT NULL,
  id text NOT NULL,
  name text,
  first_name text,
  last_name text,
  company_name text,
  is_company boolean,
  title text,
  secondary_name text,
  email text,
  phone text,
  balance double precision,
  billing_address_present boolean,
  billing_address_street text,
  billing_address_street1 text,
  billing_address_street2 text,
  billing_address_city text,
  billing_address_province text,
  billing_address_postal_code text,
  billing_address_country text,
  billing_address_name text,
  billing_address_latitude text,
  billing_address_longitude text,
  payment_term_id text,
  payment_term_name text,
  payment_term_days integer,
  payment_term_term_type text,
  payment_term_is_editable boolean,
  is_payment_term_account_default boolean,
  is_archivable boolean,
  is_archived boolean,
  is_billing_contact boolean,
  is_lead boolean,
  lead_source text,
  role text,
  sample_data boolean,
  scheduled_items_available boolean,
  receives_follow_ups boolean,
  receives_invoice_follow_ups boolean,
  receives_quote_follow_ups boolean,
  receives_reminders boolean,
  receives_review_requests boolean,
  client_hub_delegate_login_url text,
  client_hub_user_id text,
  jobber_web_uri text,
  created_at timestamptz,
  updated_at timestamptz,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
COMMENT ON TABLE clients IS 'Client: Clients are the customers who pay for services on Jobber''s platform - they belong to the Jobber account / service provider.';
COMMENT ON COLUMN clients.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN clients.id IS 'The unique identifier';
COMMENT ON COLUMN clients.name IS 'The primary name of the client';
COMMENT ON COLUMN clients.first_name IS 'The first name of the client';
COMMENT ON COLUMN clients.last_name IS 'The last name of the client';
COMMENT ON COLUMN clients.company_name IS 'The name of the business';
COMMENT ON COLUMN clients.is_company IS 'Does the client represent a business';
COMMENT ON COLUMN clients.title IS 'The title of the client';
COMMENT ON COLUMN clients.secondary_name IS 'The secondary name of the client';
COMMENT ON COLUMN clients.email IS 'The client''s primary email address';
COMMENT ON COLUMN clients.phone IS 'The client''s primary phone number';
COMMENT ON COLUMN clients.balance IS 'The client''s current balance';
COMMENT ON COLUMN clients.billing_address_present IS 'Is a custom billing address present for this client?';
COMMENT ON COLUMN clients.billing_address_street IS 'The street component';
COMMENT ON COLUMN clients.billing_address_street1 IS 'The first line of the street address';
COMMENT ON COLUMN clients.billing_address_street2 IS 'The second line of the street address';
COMMENT ON COLUMN clients.billing_address_city IS 'The city for this address.';
COMMENT ON COLUMN clients.billing_address_province IS 'The state or province of this address.';
COMMENT ON COLUMN clients.billing_address_postal_code IS 'The zip or postal code of this address.';
COMMENT ON COLUMN clients.billing_address_country IS 'The country of this address.';
COMMENT ON COLUMN clients.billing_address_name IS 'The name of the property for the address';
COMMENT ON COLUMN clients.billing_address_latitude IS 'The latitude of this address.';
COMMENT ON COLUMN clients.billing_address_longitude IS 'The longitude of this address.';
COMMENT ON COLUMN clients.payment_term_id IS 'The unique identifier';
COMMENT ON COLUMN clients.payment_term_name IS 'The name of the payment term';
COMMENT ON COLUMN clients.payment_term_days IS 'The number of days until payment is due when term_type is DAYS; for other term types this value is not used';
COMMENT ON COLUMN clients.payment_term_term_type IS 'The type of payment term';
COMMENT ON COLUMN clients.payment_term_is_editable IS 'Whether this payment term can be edited';
COMMENT ON COLUMN clients.is_payment_term_account_default IS 'Whether the client''s payment term is inherited from the account default rather than explicitly set';
COMMENT ON COLUMN clients.is_archivable IS 'Is the client archivable';
COMMENT ON COLUMN clients.is_archived IS 'Is the client archived';
COMMENT ON COLUMN clients.is_billing_contact IS 'Is the primary contact also the billing contact';
COMMENT ON COLUMN clients.is_lead IS 'The status of the client; represents whether the client is a prospective lead';
COMMENT ON COLUMN clients.lead_source IS 'The lead source label for this client (e.g. "Google", a custom source label), or null if none is set';
COMMENT ON COLUMN clients.role IS 'The role of the primary contact';
COMMENT ON COLUMN clients.sample_data IS 'Is the client sample data';
COMMENT ON COLUMN clients.scheduled_items_available IS 'Whether scheduledItems can be listed for this client. Returns false when the client has too many attached records (properties, jobs, invoices, quotes, or requests) to efficiently query; in that case scheduledItems will resolve to an empty connection and callers should direct users to the main schedule view instead.';
COMMENT ON COLUMN clients.receives_follow_ups IS 'Does the client receive job follow ups';
COMMENT ON COLUMN clients.receives_invoice_follow_ups IS 'Does the client receive invoice follow ups';
COMMENT ON COLUMN clients.receives_quote_follow_ups IS 'Does the client receive quote follow ups';
COMMENT ON COLUMN clients.receives_reminders IS 'Does the client receive assessment or visit reminders';
COMMENT ON COLUMN clients.receives_review_requests IS 'Does the client receive review requests';
COMMENT ON COLUMN clients.client_hub_delegate_login_url IS 'Generate an authenticated Client Hub URL for delegate login';
COMMENT ON COLUMN clients.client_hub_user_id IS 'Encoded Client Hub user id for request-card-on-file communications';
COMMENT ON COLUMN clients.jobber_web_uri IS 'The URI for the given record in Jobber Online';
COMMENT ON COLUMN clients.created_at IS 'The time the client was created';
COMMENT ON COLUMN clients.updated_at IS 'The last time the client was updated';
COMMENT ON COLUMN clients.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN clients.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN clients.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN clients.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

-- properties
CREATE TABLE properties (
  account_id text NOT NULL,
  id text NOT NULL,
  client_id text,
  name text,
  address_street text,
  address_street1 text,
  address_street2 text,
  address_city text,
  address_province text,
  address_postal_code text,
  address_country text,
  address_name text,
  address_geo_status text,
  address_coordinates_latitude double precision,
  address_coordinates_longitude double precision,
  is_billing_address boolean,
  routing_order integer,
  jobber_web_uri text,
  created_at timestamptz,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX properties_client_id ON properties (account_id, client_id);
COMMENT ON TABLE properties IS 'Property: Properties are locations owned by Service Consumers where Service Providers provide service for';
COMMENT ON COLUMN properties.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN properties.id IS 'The unique identifier';
COMMENT ON COLUMN properties.client_id IS 'The client associated with the property';
COMMENT ON COLUMN properties.name IS 'The name of the property';
COMMENT ON COLUMN properties.address_street IS 'The street address';
COMMENT ON COLUMN properties.address_street1 IS 'The first line of the street address';
COMMENT ON COLUMN properties.address_street2 IS 'The second line of the street address';
COMMENT ON COLUMN properties.address_city IS 'The city of the address';
COMMENT ON COLUMN properties.address_province IS 'The province of the address';
COMMENT ON COLUMN properties.address_postal_code IS 'The postal code of the address';
COMMENT ON COLUMN properties.address_country IS 'The country of the address';
COMMENT ON COLUMN properties.address_name IS 'The name of the property for the address';
COMMENT ON COLUMN properties.address_geo_status IS 'The status of geo-locating the coordinates for an address';
COMMENT ON COLUMN properties.address_coordinates_latitude IS 'The geographic coordinate that specifies the north-south position of a point on the Earth''s surface';
COMMENT ON COLUMN properties.address_coordinates_longitude IS 'The geographic coordinate that specifies the east-west position of a point on the Earth''s surface';
COMMENT ON COLUMN properties.is_billing_address IS 'Whether the property is a billing address';
COMMENT ON COLUMN properties.routing_order IS 'The routing order of the property';
COMMENT ON COLUMN properties.jobber_web_uri IS 'The URI for the given record in Jobber Online';
COMMENT ON COLUMN properties.created_at IS 'The time at which this property record was first created';
COMMENT ON COLUMN properties.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN properties.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN properties.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN properties.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

-- requests
CREATE TABLE requests (
  account_id text NOT NULL,
  id text NOT NULL,
  title text,
  request_status text,
  client_id text,
  property_id text,
  referring_client_id text,
  salesperson_id text,
  company_name text,
  contact_name text,
  email text,
  phone text,
  source text,
  is_archivable boolean,
  is_scheduled boolean,
  jobber_web_uri text,
  created_at timestamptz,
  updated_at timestamptz,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX requests_client_id ON requests (account_id, client_id);
CREATE INDEX requests_property_id ON requests (account_id, property_id);
CREATE INDEX requests_referring_client_id ON requests (account_id, referring_client_id);
CREATE INDEX requests_salesperson_id ON requests (account_id, salesperson_id);
COMMENT ON TABLE requests IS 'Request: A request which a client will create when they wish to enlist the help of a Service Provider for work';
COMMENT ON COLUMN requests.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN requests.id IS 'The unique identifier';
COMMENT ON COLUMN requests.title IS 'The title of the work request';
COMMENT ON COLUMN requests.request_status IS 'The status of the work request';
COMMENT ON COLUMN requests.client_id IS 'The client associated with the work request';
COMMENT ON COLUMN requests.property_id IS 'The property associated with the work request';
COMMENT ON COLUMN requests.referring_client_id IS 'The client that referred this work request, if this work request was referred';
COMMENT ON COLUMN requests.salesperson_id IS 'Salesperson for the request';
COMMENT ON COLUMN requests.company_name IS 'The company name provided in the work request';
COMMENT ON COLUMN requests.contact_name IS 'The primary contact of the client requesting work';
COMMENT ON COLUMN requests.email IS 'The contact email provided in the work request';
COMMENT ON COLUMN requests.phone IS 'The contact phone provided in the work request';
COMMENT ON COLUMN requests.source IS 'The source of the work request';
COMMENT ON COLUMN requests.is_archivable IS 'Whether the work request can be archived';
COMMENT ON COLUMN requests.is_scheduled IS 'Whether the work request is scheduled';
COMMENT ON COLUMN requests.jobber_web_uri IS 'The URI for the given record in Jobber Online';
COMMENT ON COLUMN requests.created_at IS 'The time the work request was created';
COMMENT ON COLUMN requests.updated_at IS 'The last time the work request was changed in a way that is meaningful to the Service Provider';
COMMENT ON COLUMN requests.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN requests.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN requests.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN requests.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

CREATE TABLE request_line_items (
  account_id text NOT NULL,
  id text NOT NULL,
  request_id text NOT NULL,
  name text,
  description text,
  category text,
  quantity double precision,
  unit_price double precision,
  total_price double precision,
  taxable boolean,
  linked_product_or_service_id text,
  created_at timestamptz,
  updated_at timestamptz,
  total_cost double precision,
  unit_cost double precision,
  sort_order integer,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX request_line_items_request_id ON request_line_items (account_id, request_id);
CREATE INDEX request_line_items_linked_product_or_service_id ON request_line_items (account_id, linked_product_or_service_id);
COMMENT ON TABLE request_line_items IS 'RequestLineItem: A request line item';
COMMENT ON COLUMN request_line_items.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN request_line_items.id IS 'The unique identifier';
COMMENT ON COLUMN request_line_items.request_id IS 'The Request the line item belongs to (requests.id).';
COMMENT ON COLUMN request_line_items.name IS 'The name of the line item';
COMMENT ON COLUMN request_line_items.description IS 'The description of the line item';
COMMENT ON COLUMN request_line_items.category IS 'The category of the line item';
COMMENT ON COLUMN request_line_items.quantity IS 'The quantity of the line item';
COMMENT ON COLUMN request_line_items.unit_price IS 'The unit price of the line item';
COMMENT ON COLUMN request_line_items.total_price IS 'The total price of the line item';
COMMENT ON COLUMN request_line_items.taxable IS 'If the line item is taxable';
COMMENT ON COLUMN request_line_items.linked_product_or_service_id IS 'The product or service from the Service Providers saved Products and Services list that was used to create this line item';
COMMENT ON COLUMN request_line_items.created_at IS 'The DateTime the line item was created';
COMMENT ON COLUMN request_line_items.updated_at IS 'The last DateTime the line item was changed in a way that is meaningful to the Service Provider';
COMMENT ON COLUMN request_line_items.total_cost IS 'The total cost of the line item';
COMMENT ON COLUMN request_line_items.unit_cost IS 'The unit cost of the line item';
COMMENT ON COLUMN request_line_items.sort_order IS 'The sort order of the line item';
COMMENT ON COLUMN request_line_items.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN request_line_items.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN request_line_items.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN request_line_items.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

-- quotes
CREATE TABLE quotes (
  account_id text NOT NULL,
  id text NOT NULL,
  quote_number text,
  title text,
  quote_status text,
  client_id text,
  property_id text,
  request_id text,
  salesperson_id text,
  amounts_subtotal double precision,
  amounts_discount_amount double precision,
  amounts_tax_amount double precision,
  amounts_non_tax_amount double precision,
  amounts_total double precision,
  amounts_deposit_amount double precision,
  amounts_outstanding_deposit_amount double precision,
  deposit_amount_unallocated double precision,
  message text,
  contract_disclaimer text,
  processed_by text,
  eligible_for_financing boolean,
  has_quote_number_duplicates boolean,
  has_refundable_surcharge_payments boolean,
  client_hub_uri text,
  client_hub_viewed_at timestamptz,
  jobber_web_uri text,
  sent_at timestamptz,
  transitioned_at timestamptz,
  created_at timestamptz,
  updated_at timestamptz,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX quotes_client_id ON quotes (account_id, client_id);
CREATE INDEX quotes_property_id ON quotes (account_id, property_id);
CREATE INDEX quotes_request_id ON quotes (account_id, request_id);
CREATE INDEX quotes_salesperson_id ON quotes (account_id, salesperson_id);
COMMENT ON TABLE quotes IS 'Quote: A cost estimate of work which Service Providers send to their clients before any work is done';
COMMENT ON COLUMN quotes.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN quotes.id IS 'The unique identifier';
COMMENT ON COLUMN quotes.quote_number IS 'A non-unique number assigned to the quote by a Service Provider';
COMMENT ON COLUMN quotes.title IS 'The description of the quote';
COMMENT ON COLUMN quotes.quote_status IS 'The current status the quote';
COMMENT ON COLUMN quotes.client_id IS 'The client the quote was made for';
COMMENT ON COLUMN quotes.property_id IS 'The property the quote was made for';
COMMENT ON COLUMN quotes.request_id IS 'The request associated with the quote';
COMMENT ON COLUMN quotes.salesperson_id IS 'Salesperson for the quote';
COMMENT ON COLUMN quotes.amounts_subtotal IS 'The subtotal including line item costs but excluding tax amounts';
COMMENT ON COLUMN quotes.amounts_discount_amount IS 'The discount amount';
COMMENT ON COLUMN quotes.amounts_tax_amount IS 'The tax amount';
COMMENT ON COLUMN quotes.amounts_non_tax_amount IS 'The non-tax amount including the line items which are exempted from the tax';
COMMENT ON COLUMN quotes.amounts_total IS 'The total cost of the invoice or quote, including line item costs and tax amounts';
COMMENT ON COLUMN quotes.amounts_deposit_amount IS 'The deposit amount';
COMMENT ON COLUMN quotes.amounts_outstanding_deposit_amount IS 'The remaining balance of the quote deposit yet to be collected';
COMMENT ON COLUMN quotes.deposit_amount_unallocated IS 'Paid deposit amount that is not yet associated with an invoice';
COMMENT ON COLUMN quotes.message IS 'The message to the client';
COMMENT ON COLUMN quotes.contract_disclaimer IS 'The contract disclaimer for the quote';
COMMENT ON COLUMN quotes.processed_by IS 'The source processor that processed the quote creation';
COMMENT ON COLUMN quotes.eligible_for_financing IS 'Indicates if the quote is eligible for Wisetack financing offers';
COMMENT ON COLUMN quotes.has_quote_number_duplicates IS 'Whether there are other quotes with the same quote number';
COMMENT ON COLUMN quotes.has_refundable_surcharge_payments IS 'Whether the quote has any deposit records with refundable surcharge amounts';
COMMENT ON COLUMN quotes.client_hub_uri IS 'The URI of the quote in client hub';
COMMENT ON COLUMN quotes.client_hub_viewed_at IS 'Time the quote was viewed at in Client Hub';
COMMENT ON COLUMN quotes.jobber_web_uri IS 'The URI for the given record in Jobber Online';
COMMENT ON COLUMN quotes.sent_at IS 'The time a quote was last sent to the Service Client';
COMMENT ON COLUMN quotes.transitioned_at IS 'Time the quote transitioned to its current status';
COMMENT ON COLUMN quotes.created_at IS 'The time the quote was created';
COMMENT ON COLUMN quotes.updated_at IS 'The last time the quote was changed in a way that is meaningful to the Service Provider';
COMMENT ON COLUMN quotes.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN quotes.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN quotes.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN quotes.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

CREATE TABLE quote_line_items (
  account_id text NOT NULL,
  id text NOT NULL,
  quote_id text NOT NULL,
  name text,
  description text,
  category text,
  quantity double precision,
  unit_price double precision,
  total_price double precision,
  taxable boolean,
  linked_product_or_service_id text,
  created_at timestamptz,
  updated_at timestamptz,
  total_cost double precision,
  markup double precision,
  optional boolean,
  recommended boolean,
  sort_order integer,
  text_only boolean,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX quote_line_items_quote_id ON quote_line_items (account_id, quote_id);
CREATE INDEX quote_line_items_linked_product_or_service_id ON quote_line_items (account_id, linked_product_or_service_id);
COMMENT ON TABLE quote_line_items IS 'QuoteLineItem: A quote line item';
COMMENT ON COLUMN quote_line_items.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN quote_line_items.id IS 'The unique identifier';
COMMENT ON COLUMN quote_line_items.quote_id IS 'The Quote the line item belongs to (quotes.id).';
COMMENT ON COLUMN quote_line_items.name IS 'The name of the line item';
COMMENT ON COLUMN quote_line_items.description IS 'The description of the line item';
COMMENT ON COLUMN quote_line_items.category IS 'The category of the line item';
COMMENT ON COLUMN quote_line_items.quantity IS 'The quantity of the line item';
COMMENT ON COLUMN quote_line_items.unit_price IS 'The unit price of the line item';
COMMENT ON COLUMN quote_line_items.total_price IS 'The total price of the line item';
COMMENT ON COLUMN quote_line_items.taxable IS 'If the line item is taxable';
COMMENT ON COLUMN quote_line_items.linked_product_or_service_id IS 'The product or service from the Service Providers saved Products and Services list that was used to create this line item';
COMMENT ON COLUMN quote_line_items.created_at IS 'The DateTime the line item was created';
COMMENT ON COLUMN quote_line_items.updated_at IS 'The last DateTime the line item was changed in a way that is meaningful to the Service Provider';
COMMENT ON COLUMN quote_line_items.total_cost IS 'The total cost of the line item';
COMMENT ON COLUMN quote_line_items.markup IS 'The markup of the line item';
COMMENT ON COLUMN quote_line_items.optional IS 'Is the line item considered optional?';
COMMENT ON COLUMN quote_line_items.recommended IS 'When the line item is optional, is it recommended or has it been selected to be included by the client?';
COMMENT ON COLUMN quote_line_items.sort_order IS 'The sort order of the line item';
COMMENT ON COLUMN quote_line_items.text_only IS 'Is the line item text only (doesn''t include quantity and price information)';
COMMENT ON COLUMN quote_line_items.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN quote_line_items.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN quote_line_items.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN quote_line_items.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

-- jobs
ALTER TABLE jobs ALTER COLUMN job_number DROP NOT NULL, ALTER COLUMN title DROP NOT NULL, ALTER COLUMN job_status DROP NOT NULL, ALTER COLUMN job_type DROP NOT NULL, ALTER COLUMN billing_type DROP NOT NULL, ALTER COLUMN source DROP NOT NULL, ALTER COLUMN instructions DROP NOT NULL, ALTER COLUMN default_visit_title DROP NOT NULL, ALTER COLUMN jobber_web_uri DROP NOT NULL, ALTER COLUMN total DROP NOT NULL, ALTER COLUMN invoiced_total DROP NOT NULL, ALTER COLUMN uninvoiced_total DROP NOT NULL, ALTER COLUMN completed_and_uninvoiced_visits_count DROP NOT NULL, ALTER COLUMN completed_and_uninvoiced_visits_total DROP NOT NULL, ALTER COLUMN ready_to_close DROP NOT NULL, ALTER COLUMN allow_review_request DROP NOT NULL, ALTER COLUMN visit_generation_in_progress DROP NOT NULL, ALTER COLUMN visit_rescheduling_in_progress DROP NOT NULL, ALTER COLUMN will_client_be_automatically_charged DROP NOT NULL, ALTER COLUMN start_at DROP NOT NULL, ALTER COLUMN end_at DROP NOT NULL, ALTER COLUMN completed_at DROP NOT NULL, ALTER COLUMN booking_confirmation_sent_at DROP NOT NULL, ALTER COLUMN next_date_to_send_review_sms DROP NOT NULL, ALTER COLUMN pending_invoice_starts_at DROP NOT NULL, ALTER COLUMN created_at DROP NOT NULL, ALTER COLUMN updated_at DROP NOT NULL;
ALTER TABLE jobs ADD COLUMN client_id text, ADD COLUMN property_id text, ADD COLUMN quote_id text, ADD COLUMN request_id text, ADD COLUMN salesperson_id text;
CREATE INDEX jobs_client_id ON jobs (account_id, client_id);
CREATE INDEX jobs_property_id ON jobs (account_id, property_id);
CREATE INDEX jobs_quote_id ON jobs (account_id, quote_id);
CREATE INDEX jobs_request_id ON jobs (account_id, request_id);
CREATE INDEX jobs_salesperson_id ON jobs (account_id, salesperson_id);
COMMENT ON TABLE jobs IS 'Job: A detailed contract of work which Service Providers use to schedule work for a Service Consumer';
COMMENT ON COLUMN jobs.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN jobs.id IS 'The unique identifier';
COMMENT ON COLUMN jobs.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN jobs.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN jobs.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN jobs.deleted_at IS 'When account-sync found the row gone from the service (null: live).';
COMMENT ON COLUMN jobs.job_number IS 'The number of the job';
COMMENT ON COLUMN jobs.client_id IS 'The client on the job';
COMMENT ON COLUMN jobs.property_id IS 'The property associated with the job';
COMMENT ON COLUMN jobs.quote_id IS 'When applicable, the quote associated with the job';
COMMENT ON COLUMN jobs.request_id IS 'When applicable, the request associated with the job';
COMMENT ON COLUMN jobs.salesperson_id IS 'Salesperson for the job';
COMMENT ON COLUMN jobs.title IS 'The scheduling information of the job';
COMMENT ON COLUMN jobs.job_status IS 'The status of the job';
COMMENT ON COLUMN jobs.job_type IS 'The type of job';
COMMENT ON COLUMN jobs.billing_type IS 'Invoicing strategy selected for the job';
COMMENT ON COLUMN jobs.source IS 'The originating source of the job';
COMMENT ON COLUMN jobs.instructions IS 'The instructions on a job';
COMMENT ON COLUMN jobs.default_visit_title IS 'The default title for new visits';
COMMENT ON COLUMN jobs.jobber_web_uri IS 'The URI for the given record in Jobber Online';
COMMENT ON COLUMN jobs.total IS 'The total chargeable amount of the job';
COMMENT ON COLUMN jobs.invoiced_total IS 'The total invoiced amount of the job';
COMMENT ON COLUMN jobs.uninvoiced_total IS 'The total uninvoiced amount of the job';
COMMENT ON COLUMN jobs.completed_and_uninvoiced_visits_count IS 'Count of completed visits that have not been invoiced. Only relevant for visit-based billing jobs.';
COMMENT ON COLUMN jobs.completed_and_uninvoiced_visits_total IS 'The total dollar value of completed visits that have not been invoiced. Only relevant for visit-based billing jobs; returns 0 for fixed-price jobs.';
COMMENT ON COLUMN jobs.ready_to_close IS 'Whether the job is fully billed and ready to be closed';
COMMENT ON COLUMN jobs.allow_review_request IS 'Allow SMS to be sent to client for Google Reviews feature';
COMMENT ON COLUMN jobs.visit_generation_in_progress IS 'Whether the job is currently generating visits';
COMMENT ON COLUMN jobs.visit_rescheduling_in_progress IS 'Whether the job is currently rescheduling visits';
COMMENT ON COLUMN jobs.will_client_be_automatically_charged IS 'The setting for automatic invoice charges';
COMMENT ON COLUMN jobs.start_at IS 'Start date of the job';
COMMENT ON COLUMN jobs.end_at IS 'End date of the job';
COMMENT ON COLUMN jobs.completed_at IS 'The completion date of the job';
COMMENT ON COLUMN jobs.booking_confirmation_sent_at IS 'The time when booking confirmation for the job was sent';
COMMENT ON COLUMN jobs.next_date_to_send_review_sms IS 'The next available date to send an SMS review request';
COMMENT ON COLUMN jobs.pending_invoice_starts_at IS 'The date when this job requires invoicing based on billing schedule or invoice reminders';
COMMENT ON COLUMN jobs.created_at IS 'The time the job was created';
COMMENT ON COLUMN jobs.updated_at IS 'The last time the job was changed in a way that is meaningful to the Service Provider';

CREATE TABLE job_line_items (
  account_id text NOT NULL,
  id text NOT NULL,
  job_id text NOT NULL,
  name text,
  description text,
  category text,
  quantity double precision,
  unit_price double precision,
  total_price double precision,
  taxable boolean,
  linked_product_or_service_id text,
  created_at timestamptz,
  updated_at timestamptz,
  total_cost double precision,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX job_line_items_job_id ON job_line_items (account_id, job_id);
CREATE INDEX job_line_items_linked_product_or_service_id ON job_line_items (account_id, linked_product_or_service_id);
COMMENT ON TABLE job_line_items IS 'JobLineItem: A job line item';
COMMENT ON COLUMN job_line_items.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN job_line_items.id IS 'The unique identifier';
COMMENT ON COLUMN job_line_items.job_id IS 'The Job the line item belongs to (jobs.id).';
COMMENT ON COLUMN job_line_items.name IS 'The name of the line item';
COMMENT ON COLUMN job_line_items.description IS 'The description of the line item';
COMMENT ON COLUMN job_line_items.category IS 'The category of the line item';
COMMENT ON COLUMN job_line_items.quantity IS 'The quantity of the line item';
COMMENT ON COLUMN job_line_items.unit_price IS 'The unit price of the line item';
COMMENT ON COLUMN job_line_items.total_price IS 'The total price of the line item';
COMMENT ON COLUMN job_line_items.taxable IS 'If the line item is taxable';
COMMENT ON COLUMN job_line_items.linked_product_or_service_id IS 'The product or service from the Service Providers saved Products and Services list that was used to create this line item';
COMMENT ON COLUMN job_line_items.created_at IS 'The DateTime the line item was created';
COMMENT ON COLUMN job_line_items.updated_at IS 'The last DateTime the line item was changed in a way that is meaningful to the Service Provider';
COMMENT ON COLUMN job_line_items.total_cost IS 'The total (internal) cost of the line item';
COMMENT ON COLUMN job_line_items.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN job_line_items.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN job_line_items.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN job_line_items.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

-- visits
CREATE TABLE visits (
  account_id text NOT NULL,
  id text NOT NULL,
  title text,
  visit_status text,
  job_id text,
  client_id text,
  property_id text,
  invoice_id text,
  created_by_id text,
  start_at timestamptz,
  end_at timestamptz,
  all_day boolean,
  duration integer,
  completed_at timestamptz,
  completed_by text,
  is_complete boolean,
  client_confirmed boolean,
  instructions text,
  is_default_title boolean,
  is_last_scheduled_visit boolean,
  incomplete_job_forms_count integer,
  actions_upon_complete jsonb,
  origin text,
  override_order integer,
  routing_order integer,
  team_reminder_offset integer,
  amounts_visit_based_billing_total double precision,
  created_at timestamptz,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX visits_job_id ON visits (account_id, job_id);
CREATE INDEX visits_client_id ON visits (account_id, client_id);
CREATE INDEX visits_property_id ON visits (account_id, property_id);
CREATE INDEX visits_invoice_id ON visits (account_id, invoice_id);
CREATE INDEX visits_created_by_id ON visits (account_id, created_by_id);
COMMENT ON TABLE visits IS 'Visit: A visit that represents each time a Service Provider goes to a client property to complete work';
COMMENT ON COLUMN visits.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN visits.id IS 'The unique identifier';
COMMENT ON COLUMN visits.title IS 'The title of the scheduled item';
COMMENT ON COLUMN visits.visit_status IS 'The status of the visit';
COMMENT ON COLUMN visits.job_id IS 'The Job the visit is associated with';
COMMENT ON COLUMN visits.client_id IS 'The Client for the visit';
COMMENT ON COLUMN visits.property_id IS 'The property for the visit';
COMMENT ON COLUMN visits.invoice_id IS 'The invoice for the visit';
COMMENT ON COLUMN visits.created_by_id IS 'The user that created this scheduled item';
COMMENT ON COLUMN visits.start_at IS 'Start date and time of the scheduled item. An unscheduled visit is represented by both startAt and endAt being null';
COMMENT ON COLUMN visits.end_at IS 'End date and time of the scheduled item. An unscheduled visit is represented by both startAt and endAt being null';
COMMENT ON COLUMN visits.all_day IS 'Indicates whether the scheduled item is for a full day';
COMMENT ON COLUMN visits.duration IS 'Minute duration between start and end time.';
COMMENT ON COLUMN visits.completed_at IS 'The time that the visit was completed.';
COMMENT ON COLUMN visits.completed_by IS 'The name of the user or system that completed the visit.';
COMMENT ON COLUMN visits.is_complete IS 'Whether the visit has been completed';
COMMENT ON COLUMN visits.client_confirmed IS 'Whether the client has confirmed this visit';
COMMENT ON COLUMN visits.instructions IS 'The instructions for the visit';
COMMENT ON COLUMN visits.is_default_title IS 'Indicates whether the title is the default';
COMMENT ON COLUMN visits.is_last_scheduled_visit IS 'Whether the visit is the last visit for the associated job.';
COMMENT ON COLUMN visits.incomplete_job_forms_count IS 'The number of incomplete job form submissions for this visit';
COMMENT ON COLUMN visits.actions_upon_complete IS 'The actions available after completing the visit';
COMMENT ON COLUMN visits.origin IS 'The origin of the scheduled item';
COMMENT ON COLUMN visits.override_order IS 'An override for ordering anytime and unscheduled items';
COMMENT ON COLUMN visits.routing_order IS 'The order in which the scheduled item should be routed';
COMMENT ON COLUMN visits.team_reminder_offset IS 'Offset in minutes from the time of the scheduled item to notify the team';
COMMENT ON COLUMN visits.amounts_visit_based_billing_total IS 'The total amount of the visit, for a visit with visit based billing';
COMMENT ON COLUMN visits.created_at IS 'The time that the visit was created.';
COMMENT ON COLUMN visits.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN visits.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN visits.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN visits.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

CREATE TABLE visit_line_items (
  account_id text NOT NULL,
  id text NOT NULL,
  visit_id text NOT NULL,
  name text,
  description text,
  category text,
  quantity double precision,
  unit_price double precision,
  total_price double precision,
  taxable boolean,
  linked_product_or_service_id text,
  created_at timestamptz,
  updated_at timestamptz,
  total_cost double precision,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, visit_id, id)
);
CREATE INDEX visit_line_items_visit_id ON visit_line_items (account_id, visit_id);
CREATE INDEX visit_line_items_linked_product_or_service_id ON visit_line_items (account_id, linked_product_or_service_id);
COMMENT ON TABLE visit_line_items IS 'JobLineItem: A job line item';
COMMENT ON COLUMN visit_line_items.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN visit_line_items.id IS 'The unique identifier';
COMMENT ON COLUMN visit_line_items.visit_id IS 'The Visit the line item belongs to (visits.id).';
COMMENT ON COLUMN visit_line_items.name IS 'The name of the line item';
COMMENT ON COLUMN visit_line_items.description IS 'The description of the line item';
COMMENT ON COLUMN visit_line_items.category IS 'The category of the line item';
COMMENT ON COLUMN visit_line_items.quantity IS 'The quantity of the line item';
COMMENT ON COLUMN visit_line_items.unit_price IS 'The unit price of the line item';
COMMENT ON COLUMN visit_line_items.total_price IS 'The total price of the line item';
COMMENT ON COLUMN visit_line_items.taxable IS 'If the line item is taxable';
COMMENT ON COLUMN visit_line_items.linked_product_or_service_id IS 'The product or service from the Service Providers saved Products and Services list that was used to create this line item';
COMMENT ON COLUMN visit_line_items.created_at IS 'The DateTime the line item was created';
COMMENT ON COLUMN visit_line_items.updated_at IS 'The last DateTime the line item was changed in a way that is meaningful to the Service Provider';
COMMENT ON COLUMN visit_line_items.total_cost IS 'The total (internal) cost of the line item';
COMMENT ON COLUMN visit_line_items.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN visit_line_items.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN visit_line_items.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN visit_line_items.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

-- invoices
CREATE TABLE invoices (
  account_id text NOT NULL,
  id text NOT NULL,
  invoice_number text,
  subject text,
  invoice_status text,
  client_id text,
  salesperson_id text,
  amounts_subtotal double precision,
  amounts_discount_amount double precision,
  amounts_legacy_discount_amount double precision,
  amounts_tax_amount double precision,
  amounts_non_tax_amount double precision,
  amounts_tips_total double precision,
  amounts_total double precision,
  amounts_deposit_amount double precision,
  amounts_payments_total double precision,
  amounts_invoice_balance double precision,
  billing_address_street text,
  billing_address_street1 text,
  billing_address_street2 text,
  billing_address_city text,
  billing_address_province text,
  billing_address_postal_code text,
  billing_address_country text,
  billing_address_name text,
  billing_address_geo_status text,
  billing_address_coordinates_latitude double precision,
  billing_address_coordinates_longitude double precision,
  billing_is_same_as_property_address boolean,
  invoice_term_type text,
  invoice_net integer,
  invoice_net_label text,
  tax_calculation_method text,
  message text,
  contract_disclaimer text,
  allow_review_request boolean,
  automatic_payments_error text,
  has_invoice_number_duplicates boolean,
  has_refundable_surcharge_payments boolean,
  waiting_for_financed_payment boolean,
  client_hub_uri text,
  date_viewed_in_client_hub timestamptz,
  jobber_web_uri text,
  issued_date timestamptz,
  due_date timestamptz,
  received_date timestamptz,
  next_date_to_send_review_sms timestamptz,
  created_at timestamptz,
  updated_at timestamptz,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX invoices_client_id ON invoices (account_id, client_id);
CREATE INDEX invoices_salesperson_id ON invoices (account_id, salesperson_id);
COMMENT ON TABLE invoices IS 'Invoice: A request for payment which Service Providers send to their clients after the work is done';
COMMENT ON COLUMN invoices.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN invoices.id IS 'The unique identifier';
COMMENT ON COLUMN invoices.invoice_number IS 'The invoice number';
COMMENT ON COLUMN invoices.subject IS 'The subject of the invoice';
COMMENT ON COLUMN invoices.invoice_status IS 'The status of the invoice';
COMMENT ON COLUMN invoices.client_id IS 'The client the invoice is for';
COMMENT ON COLUMN invoices.salesperson_id IS 'Salesperson for the invoice';
COMMENT ON COLUMN invoices.amounts_subtotal IS 'The subtotal including line item costs but excluding tax amounts';
COMMENT ON COLUMN invoices.amounts_discount_amount IS 'The discount amount';
COMMENT ON COLUMN invoices.amounts_legacy_discount_amount IS 'The computed discount amount applied to the invoice subtotal';
COMMENT ON COLUMN invoices.amounts_tax_amount IS 'The tax amount';
COMMENT ON COLUMN invoices.amounts_non_tax_amount IS 'The non-tax amount including the line items which are exempted from the tax';
COMMENT ON COLUMN invoices.amounts_tips_total IS 'The sum of all tips paid to an invoice';
COMMENT ON COLUMN invoices.amounts_total IS 'The total cost of the invoice or quote, including line item costs and tax amounts';
COMMENT ON COLUMN invoices.amounts_deposit_amount IS 'The deposit amount';
COMMENT ON COLUMN invoices.amounts_payments_total IS 'The total payments payed on the invoice';
COMMENT ON COLUMN invoices.amounts_invoice_balance IS 'The invoice balance after all payments';
COMMENT ON COLUMN invoices.billing_address_street IS 'The street address';
COMMENT ON COLUMN invoices.billing_address_street1 IS 'The first line of the street address';
COMMENT ON COLUMN invoices.billing_address_street2 IS 'The second line of the street address';
COMMENT ON COLUMN invoices.billing_address_city IS 'The city of the address';
COMMENT ON COLUMN invoices.billing_address_province IS 'The province of the address';
COMMENT ON COLUMN invoices.billing_address_postal_code IS 'The postal code of the address';
COMMENT ON COLUMN invoices.billing_address_country IS 'The country of the address';
COMMENT ON COLUMN invoices.billing_address_name IS 'The name of the property for the address';
COMMENT ON COLUMN invoices.billing_address_geo_status IS 'The status of geo-locating the coordinates for an address';
COMMENT ON COLUMN invoices.billing_address_coordinates_latitude IS 'The geographic coordinate that specifies the north-south position of a point on the Earth''s surface';
COMMENT ON COLUMN invoices.billing_address_coordinates_longitude IS 'The geographic coordinate that specifies the east-west position of a point on the Earth''s surface';
COMMENT ON COLUMN invoices.billing_is_same_as_property_address IS 'If invoice has a billing address, returns whether the billing address is the same as the property address';
COMMENT ON COLUMN invoices.invoice_term_type IS 'The type of payment term for the invoice';
COMMENT ON COLUMN invoices.invoice_net IS 'Number of whole days after the issue_date that payment is due';
COMMENT ON COLUMN invoices.invoice_net_label IS 'The label for the payment term for the invoice';
COMMENT ON COLUMN invoices.tax_calculation_method IS 'The tax calculation method on the invoice';
COMMENT ON COLUMN invoices.message IS 'The message on the invoice';
COMMENT ON COLUMN invoices.contract_disclaimer IS 'The contract disclaimer for the invoice';
COMMENT ON COLUMN invoices.allow_review_request IS 'Allow SMS to be sent to client for Google Reviews feature';
COMMENT ON COLUMN invoices.automatic_payments_error IS 'Declined auto-charge error message to display on the invoice';
COMMENT ON COLUMN invoices.has_invoice_number_duplicates IS 'Whether there are other invoices with the same invoice number';
COMMENT ON COLUMN invoices.has_refundable_surcharge_payments IS 'Whether the invoice has any payment records with refundable surcharge amounts';
COMMENT ON COLUMN invoices.waiting_for_financed_payment IS 'Whether the invoice is waiting for a financed payment';
COMMENT ON COLUMN invoices.client_hub_uri IS 'URI of the invoice in client hub';
COMMENT ON COLUMN invoices.date_viewed_in_client_hub IS 'The date the invoice was viewed in client hub';
COMMENT ON COLUMN invoices.jobber_web_uri IS 'The URI for the given record in Jobber Online';
COMMENT ON COLUMN invoices.issued_date IS 'The date the invoice was issued on';
COMMENT ON COLUMN invoices.due_date IS 'The date the invoice is due on';
COMMENT ON COLUMN invoices.received_date IS 'The date the invoice was received on';
COMMENT ON COLUMN invoices.next_date_to_send_review_sms IS 'The next available date to send an SMS review request';
COMMENT ON COLUMN invoices.created_at IS 'The date the invoice was created on';
COMMENT ON COLUMN invoices.updated_at IS 'The last time the invoice was changed in a way that is meaningful to the Service Provider';
COMMENT ON COLUMN invoices.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN invoices.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN invoices.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN invoices.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

CREATE TABLE invoice_line_items (
  account_id text NOT NULL,
  id text NOT NULL,
  invoice_id text NOT NULL,
  name text,
  description text,
  category text,
  quantity double precision,
  unit_price double precision,
  total_price double precision,
  taxable boolean,
  linked_product_or_service_id text,
  created_at timestamptz,
  updated_at timestamptz,
  date timestamptz,
  original_cost double precision,
  job_line_item_id text,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX invoice_line_items_invoice_id ON invoice_line_items (account_id, invoice_id);
CREATE INDEX invoice_line_items_linked_product_or_service_id ON invoice_line_items (account_id, linked_product_or_service_id);
CREATE INDEX invoice_line_items_job_line_item_id ON invoice_line_items (account_id, job_line_item_id);
COMMENT ON TABLE invoice_line_items IS 'InvoiceLineItem: An invoice line item';
COMMENT ON COLUMN invoice_line_items.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN invoice_line_items.id IS 'The unique identifier';
COMMENT ON COLUMN invoice_line_items.invoice_id IS 'The Invoice the line item belongs to (invoices.id).';
COMMENT ON COLUMN invoice_line_items.name IS 'The name of the line item';
COMMENT ON COLUMN invoice_line_items.description IS 'The description of the line item';
COMMENT ON COLUMN invoice_line_items.category IS 'The category of the line item';
COMMENT ON COLUMN invoice_line_items.quantity IS 'The quantity of the line item';
COMMENT ON COLUMN invoice_line_items.unit_price IS 'The unit price of the line item';
COMMENT ON COLUMN invoice_line_items.total_price IS 'The total price of the line item';
COMMENT ON COLUMN invoice_line_items.taxable IS 'If the line item is taxable';
COMMENT ON COLUMN invoice_line_items.linked_product_or_service_id IS 'The product or service from the Service Providers saved Products and Services list that was used to create this line item';
COMMENT ON COLUMN invoice_line_items.created_at IS 'The DateTime the line item was created';
COMMENT ON COLUMN invoice_line_items.updated_at IS 'The last DateTime the line item was changed in a way that is meaningful to the Service Provider';
COMMENT ON COLUMN invoice_line_items.date IS 'The date of service associated with this line item';
COMMENT ON COLUMN invoice_line_items.original_cost IS 'The original cost of the line item before any progress invoicing adjustments';
COMMENT ON COLUMN invoice_line_items.job_line_item_id IS 'The associated job line item if this invoice line item was created from a job';
COMMENT ON COLUMN invoice_line_items.raw IS 'The node as the service sent it (strings Postgres cannot store spelled out, see the README).';
COMMENT ON COLUMN invoice_line_items.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN invoice_line_items.synced_at IS 'When the row''s content last changed here (an unchanged row is not rewritten).';
COMMENT ON COLUMN invoice_line_items.deleted_at IS 'When account-sync found the row gone from the service (null: live).';

-- custom fields
CREATE TABLE custom_fields (
  account_id text NOT NULL,
  parent_type text NOT NULL,
  parent_id text NOT NULL,
  field_key text NOT NULL,
  field_id text,
  label text NOT NULL,
  kind text NOT NULL,
  unit text,
  value_text text,
  value jsonb,
  raw jsonb NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  synced_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  PRIMARY KEY (account_id, parent_type, parent_id, field_key)
);
COMMENT ON TABLE custom_fields IS 'The custom fields of clients, invoices, jobs, properties, quotes and users (CustomFieldUnion), replaced with their parent.';
COMMENT ON COLUMN custom_fields.account_id IS 'The connected account the row belongs to (its `account { id }`).';
COMMENT ON COLUMN custom_fields.parent_type IS 'The type of the record the field is on: Client, Invoice, Job, Property, Quote or User.';
COMMENT ON COLUMN custom_fields.parent_id IS 'The id of the record the field is on (clients.id, jobs.id, ...).';
COMMENT ON COLUMN custom_fields.field_key IS 'The field''s id, or its label when it has none: unique per record.';
COMMENT ON COLUMN custom_fields.field_id IS 'The identifier to the custom field.';
COMMENT ON COLUMN custom_fields.label IS 'The label of the custom field.';
COMMENT ON COLUMN custom_fields.kind IS 'The kind of value: CustomFieldArea, CustomFieldBoolean, CustomFieldLink, CustomFieldNumber, CustomFieldSelect or CustomFieldText.';
COMMENT ON COLUMN custom_fields.unit IS 'The unit of an area or a number.';
COMMENT ON COLUMN custom_fields.value_text IS 'The value as text: the text, number, true/false, chosen option, URL of a link, or length x width unit of an area.';
COMMENT ON COLUMN custom_fields.value IS 'The value as JSON: a string, number or boolean; {text, url} for a link; {length, width} for an area.';
COMMENT ON COLUMN custom_fields.raw IS 'The custom field as the service sent it.';
COMMENT ON COLUMN custom_fields.first_seen_at IS 'When account-sync first landed the row.';
COMMENT ON COLUMN custom_fields.synced_at IS 'When the row''s content last changed here.';
COMMENT ON COLUMN custom_fields.deleted_at IS 'When the field left its record, or its record was found gone (null: live).';
CREATE INDEX custom_fields_label ON custom_fields (account_id, parent_type, label);
