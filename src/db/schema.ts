// Table types for Kysely. Both engines store the same shapes: instants as integer milliseconds
// since the epoch (bigint on PostgreSQL), booleans as 0/1, structured values as JSON text.
import type { Generated } from 'kysely';
import type { FormType, InputType } from '../core/forms/form-fields.js';
import type { MessageKind, MessageState } from '../core/messages.js';
import type { Attendance, BookingSource, BookingStatus } from '../core/bookings.js';
import type { DeliveryState } from '../core/webhooks.js';

export interface MetaTable {
  id: number;
  /** bumped in the same transaction as any change the API reads from the cache (settings, token, schedules…) */
  config_version: number;
}

export interface SettingsTable {
  key: string;
  /** JSON text */
  value: string;
}

export interface AdminsTable {
  id: Generated<number>;
  email: string;
  password_hash: string;
  created_at: number;
  /** what the admin may do (migration 015); the first admin and every earlier one is an administrator */
  role: Generated<AdminRole>;
  /** the name shown to other users and in the audit trail; '' until the user gives one */
  name: Generated<string>;
  /** JSON list of the schedule ids a staff member works on (ignored for an administrator) */
  schedule_ids: Generated<string>;
  last_sign_in_at: number | null;
}

export type AdminRole = 'administrator' | 'staff';

export interface AdminInvitationsTable {
  id: Generated<number>;
  /** SHA-256 (base64url) of the link's random token; the token itself is never stored */
  token_hash: string;
  email: string;
  role: AdminRole;
  /** JSON list of schedule ids */
  schedule_ids: string;
  invited_by: number | null;
  created_at: number;
  expires_at: number;
  /** set when the link was used: it works once */
  used_at: number | null;
}

export type AuditActorKind = 'admin' | 'api' | 'customer' | 'cli' | 'system';

export interface AuditEventsTable {
  id: Generated<number>;
  at: number;
  actor_kind: AuditActorKind;
  /** the admin user who acted (no foreign key: the trail outlives a removed user) */
  actor_admin_id: number | null;
  /** the actor's name or e-mail when they acted */
  actor_label: Generated<string>;
  /** 'booking.created', 'booking.cancelled', 'booking.rescheduled', 'booking.edited', 'user.invited', … */
  action: string;
  booking_id: number | null;
  summary: Generated<string>;
}

export interface SchedulesTable {
  id: Generated<number>;
  name: string;
  slot_interval_minutes: number;
  min_notice_minutes: number;
  horizon_days: number;
  capacity: number;
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  /** JSON: {"mon": [["09:00","12:00"]], ...} */
  weekly_hours: string;
  /** JSON: [{"date": "2026-12-24", "hours": []}, ...] */
  exceptions: string;
  created_at: number;
  /** bumped with every booking and cancellation of the schedule (cache key of /days) */
  bookings_version: Generated<number>;
  /** the customer can cancel or move through the manage link until this many minutes before the start */
  cancel_cutoff_minutes: Generated<number>;
  /** set when retired: gone from the API and new bookings, its bookings kept */
  retired_at: number | null;
  /** JSON list of minutes before the appointment at which the customer is reminded (migration 010) */
  reminder_minutes: Generated<string>;
}

export interface ReasonsTable {
  id: Generated<number>;
  schedule_id: number;
  name: string;
  description: string;
  duration_minutes: number;
  /** set when retired: gone from the API and new bookings, its bookings kept */
  retired_at: number | null;
}

export interface FormFieldsTable {
  id: Generated<number>;
  schedule_id: number;
  position: number;
  name: string;
  label: string;
  form_type: FormType;
  input_type: InputType;
  required: number;
  /** JSON list of strings */
  options: string;
  default_value: string;
}

export interface CustomersTable {
  id: Generated<number>;
  /** lower-cased e-mail address, unique; null for a customer without one */
  email_key: string | null;
  email: string | null;
  first_name: string;
  last_name: string;
  phone: string;
  created_at: number;
  updated_at: number;
  /** staff-only text (migration 013) */
  notes: Generated<string>;
  /** when the customer's personal data was erased on request; the row stays for the bookings' statistics */
  erased_at: number | null;
}

export interface BookingsTable {
  id: Generated<number>;
  details_id: string;
  schedule_id: number;
  reason_id: number;
  customer_id: number;
  /** instants (ms) of the appointment itself; buffers come from the schedule */
  start_at: number;
  end_at: number;
  status: BookingStatus;
  source: BookingSource;
  /** JSON: the validated answers keyed by field name */
  answers: string;
  created_at: number;
  cancelled_at: number | null;
  /** the schedule's bookings version written by the transaction that last booked or cancelled this row (0: before migration 009) */
  changed_in: Generated<number>;
  /** when the customer's details or answers were last edited in the admin area (migration 013) */
  updated_at: number | null;
  /** the rules staff set aside booking by hand, comma-separated (core/bookings.ts STAFF_OVERRIDES); null: none */
  staff_overrides: string | null;
  /** the iCalendar SEQUENCE of its event: raised by each move and by the cancellation (migration 011) */
  sequence: Generated<number>;
  /** the time before the last move by the customer, for the office's notice */
  moved_from_start: number | null;
  moved_from_end: number | null;
  /** the customer's reason when they cancelled through the manage link */
  cancel_reason: string | null;
  /** 'customer' (manage link) or 'office' (admin area); null while booked or before migration 011 */
  cancelled_by: string | null;
  /** whether the customer came, marked by the office once it began (migration 014); null: not marked */
  attendance: Attendance | null;
  attendance_at: number | null;
}

/** practice-wide closed days (holidays): local dates 'YYYY-MM-DD', first to last inclusive */
export interface ClosuresTable {
  id: Generated<number>;
  first_day: string;
  last_day: string;
  label: string;
  created_at: number;
}

export interface OutboxTable {
  id: Generated<number>;
  booking_id: number | null;
  /** what to render */
  kind: MessageKind;
  recipient: string;
  state: MessageState;
  attempts: number;
  next_attempt_at: number;
  claimed_until: number | null;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
  /** why a 'skipped' message was not sent */
  skip_reason: string | null;
}

export interface SignInFailuresTable {
  id: Generated<number>;
  /** 'email:', 'ip:' or 'pair:' and SHA-256 (base64url) digests of the e-mail key and/or the client address (see app/admin-auth.ts) */
  key: string;
  failed_at: number;
}

export interface AdminSessionsTable {
  /** SHA-256 (base64url) of the session id the cookie carries; the id itself is never stored */
  id_hash: string;
  admin_id: number;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  /** a newly generated API token, held only until the page that shows it once is opened */
  unshown_api_token: string | null;
  /** a new invitation link, held only until the page that shows it once is opened (migration 015) */
  unshown_invitation: string | null;
}

export interface UsedFormTokensTable {
  /** the one-time token a creating form carried; a second submission finds it here */
  token: string;
  used_at: number;
  /** the admin path of what the submission created, linked from the "already submitted" page */
  outcome: string | null;
}

export interface WebhookEndpointsTable {
  id: Generated<number>;
  url: string;
  /** JSON list of event names (core/webhooks.ts) */
  events: string;
  /** "whsec_…", kept as it is: signing needs the secret itself (docs/security.md, "Webhooks") */
  secret: string;
  /** 1 once the secret was shown (the CLI prints it at once; the admin area on the page after adding) */
  secret_shown: number;
  enabled: number;
  created_at: number;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  endpoint_id: number;
  /** the event's id, the same for every endpoint and attempt (the receiver's idempotency key) */
  event_id: string;
  event_type: string;
  booking_id: number | null;
  /** the JSON body exactly as sent */
  body: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number;
  claimed_until: number | null;
  /** HTTP status of the last attempt, null when there was no answer */
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  /** when it was queued or last resent: retries stop this long after it (WEBHOOK_GIVE_UP_AFTER_HOURS) */
  queued_at: number;
  delivered_at: number | null;
}

export interface IdempotencyKeysTable {
  /** the client's Idempotency-Key header (1..255 printable ASCII characters) */
  key: string;
  /** SHA-256 (hex) of the request's parsed JSON body: the same key with another body is refused */
  request_hash: string;
  /** random id of the request holding the claim: only it completes or releases the row */
  claim: string;
  /** the answer's status; null while the owning request is still in progress */
  status: number | null;
  /** the answer's JSON body as sent; null while in progress */
  body: string | null;
  /** when the owning request claimed the key: a claim older than the lease counts as abandoned */
  started_at: number;
  expires_at: number;
}

export interface Database {
  meta: MetaTable;
  settings: SettingsTable;
  admins: AdminsTable;
  schedules: SchedulesTable;
  reasons: ReasonsTable;
  form_fields: FormFieldsTable;
  customers: CustomersTable;
  closures: ClosuresTable;
  bookings: BookingsTable;
  outbox: OutboxTable;
  sign_in_failures: SignInFailuresTable;
  admin_sessions: AdminSessionsTable;
  idempotency_keys: IdempotencyKeysTable;
  used_form_tokens: UsedFormTokensTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  admin_invitations: AdminInvitationsTable;
  audit_events: AuditEventsTable;
}
