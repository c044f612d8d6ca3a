// The messages, rendered from the booking as it is when the message is sent (pure: no I/O, no
// clock). Plain text and HTML carry the same facts; every customer or operator value is escaped in
// HTML and flattened in headers (core/text.ts). The .ics lets the recipient's calendar add or remove it.
import type { Answer } from '../core/forms/form-fields.js';
import { TimeZone } from '../core/time/zone.js';
import type { MessageKind } from '../core/messages.js';
import { escapeHtml, headerText, personName, singleLine } from '../core/text.js';
import { calendarFile } from './ics.js';

export interface MessageSource {
  kind: MessageKind;
  installation: { name: string; timezone: string; notifyEmail: string };
  booking: {
    detailsId: string;
    start: number;
    end: number;
    createdAt: number;
    cancelledAt: number | null;
    answers: Readonly<Record<string, Answer>>;
    /** the iCalendar SEQUENCE of the event now (0 before any change) */
    sequence?: number;
    /** the time before the customer's last move (the office's notice names it) */
    movedFrom?: { start: number; end: number } | null;
    /** what the customer wrote when cancelling through the manage link */
    cancelReason?: string | null;
  };
  /** the booking's manage page (docs/manage-link.md), or null: no public address configured, or cancelled */
  manageUrl?: string | null;
  scheduleName: string;
  reason: { name: string; durationMinutes: number };
  /** the schedule's form, in the operator's order, for the answers' labels */
  form: readonly { name: string; label: string }[];
  customer: { firstName: string; lastName: string; email: string | null };
  /** the practice's contact details (installation settings), each '' when not set */
  contact: ContactDetails;
}

export interface ContactDetails {
  phone: string;
  address: string;
  website: string;
}

export interface RenderedMessage {
  subject: string;
  /** display name of the sender: the installation's name, header-safe */
  fromName: string;
  /** where a reply should go, or null: the operator for customer mail, the customer for the operator's copy */
  replyTo: string | null;
  text: string;
  html: string;
  calendar: { method: 'REQUEST' | 'CANCEL'; filename: string; content: string };
}

function offsetText(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const minutes = Math.abs(offsetMs) / 60_000;
  return `UTC${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/**
 * The date and clock formats of a zone, made once per zone for the life of the process: constructing an
 * Intl.DateTimeFormat costs about 0.2 ms, which was the largest part of rendering a message.
 */
const formats = new Map<string, { date: Intl.DateTimeFormat; clock: Intl.DateTimeFormat }>();

function formatsOf(zone: string) {
  let found = formats.get(zone);
  if (!found) {
    found = {
      date: new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }),
      clock: new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }),
    };
    formats.set(zone, found);
  }
  return found;
}

/** "Tuesday, 2 June 2026", "09:00", "10:00", "Europe/Berlin, UTC+02:00": wall time in the installation's zone. */
export function localTimes(timezone: string, start: number, end: number) {
  const zone = TimeZone.find(timezone) ?? TimeZone.of('UTC');
  const { date, clock } = formatsOf(zone.name);
  // the offset can differ at the end when the appointment crosses a DST change; name the start's
  return {
    date: date.format(new Date(start)).replace(/^(\w+) /, '$1, '),
    from: clock.format(new Date(start)),
    to: clock.format(new Date(end)),
    zone: `${zone.name}, ${offsetText(zone.offsetAt(start))}`,
  };
}

function answerText(value: Answer): string {
  if (value === true) return 'Yes';
  if (value === false) return 'No';
  return value;
}

/** A multi-line answer's lines, each single-line: CR, LF, CRLF and U+2028/U+2029 all end a line. */
function answerLines(value: string): string[] {
  return value.split(/\r\n|[\r\n\u2028\u2029]/).map(singleLine);
}

/**
 * The customer's answers, labelled, in the form's order; answers to fields since removed keep their name.
 * A label is single-line; a value keeps its line breaks as '\n' only (the text body indents them).
 */
export function labelledAnswers(source: MessageSource): { label: string; value: string }[] {
  const { answers } = source.booking;
  const known = new Set(source.form.map((f) => f.name));
  const inForm = source.form
    .filter((f) => Object.hasOwn(answers, f.name))
    .map((f) => ({ label: f.label || f.name, value: answerText(answers[f.name]!) }));
  const others = Object.keys(answers)
    .filter((name) => !known.has(name))
    .map((name) => ({ label: name, value: answerText(answers[name]!) }));
  return [...inForm, ...others].map((a) => ({ label: singleLine(a.label), value: answerLines(a.value).join('\n') }));
}

/**
 * Every value that is one line by nature (names, the e-mail address) made single-line wherever it is
 * rendered: text, HTML, .ics and headers. Validation refuses line breaks in them on entry; this also covers
 * values stored before it did, so "Eve\r\nBcc: …" can never start a line of its own.
 */
function singleLineSource(source: MessageSource): MessageSource {
  return {
    ...source,
    installation: { ...source.installation, name: singleLine(source.installation.name) },
    scheduleName: singleLine(source.scheduleName),
    reason: { ...source.reason, name: singleLine(source.reason.name) },
    customer: {
      firstName: singleLine(source.customer.firstName),
      lastName: singleLine(source.customer.lastName),
      email: source.customer.email === null ? null : singleLine(source.customer.email),
    },
  };
}

/**
 * The practice's contact details as the last block of every customer mail: labelled lines for the text,
 * a paragraph for the HTML (the website a link). Empty when none is set. Values are single-line (settings
 * refuse line breaks on entry; this also covers anything stored otherwise).
 */
export function contactBlock(contact: ContactDetails): { text: string[]; html: string[] } {
  const items: [string, string][] = (
    [
      ['Phone', contact.phone],
      ['Address', contact.address],
      ['Website', contact.website],
    ] as [string, string][]
  )
    .map(([label, value]): [string, string] => [label, singleLine(value).trim()])
    .filter(([, value]) => value !== '');
  if (items.length === 0) return { text: [], html: [] };
  const width = Math.max(...items.map(([label]) => label.length)) + 2;
  const linked = (label: string, value: string) =>
    label === 'Website' && /^https?:\/\//i.test(value)
      ? `<a href="${escapeHtml(value)}">${escapeHtml(value)}</a>`
      : label === 'Phone'
        ? `<a href="tel:${escapeHtml(value.replace(/[^0-9+]/g, ''))}">${escapeHtml(value)}</a>`
        : escapeHtml(value);
  return {
    text: ['', 'How to reach us:', ...items.map(([label, value]) => `  ${`${label}:`.padEnd(width)}${value}`)],
    html: [`<p>How to reach us:<br>${items.map(([label, value]) => `${escapeHtml(label)}: ${linked(label, value)}`).join('<br>')}</p>`],
  };
}

/** The manage link's lines in a customer mail, or none (no public address configured, or nothing left to manage). */
function manageLink(source: MessageSource): { text: string[]; html: string[] } {
  const url = source.manageUrl;
  if (!url || !CUSTOMER_KINDS_WITH_LINK.has(source.kind)) return { text: [], html: [] };
  const line = 'To cancel or move this appointment, open:';
  return { text: [line, url, ''], html: [`<p>${escapeHtml(line)}<br><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p>`] };
}

const CUSTOMER_KINDS_WITH_LINK: ReadonlySet<MessageKind> = new Set(['booking_confirmation', 'booking_moved', 'booking_reminder']);

/** The kinds that go to the office, not to the customer. */
const OFFICE_KINDS: ReadonlySet<MessageKind> = new Set([
  'booking_notification',
  'booking_cancellation_notification',
  'customer_cancelled_notice',
  'customer_moved_notice',
]);

/** The kinds whose .ics removes the event. */
const CANCEL_KINDS: ReadonlySet<MessageKind> = new Set([
  'booking_cancellation',
  'booking_cancellation_notification',
  'customer_cancelled_notice',
]);

function customerName(source: MessageSource): string {
  return personName(source.customer.firstName, source.customer.lastName);
}

export function renderMessage(original: MessageSource): RenderedMessage {
  const source = singleLineSource(original);
  const { installation, booking, reason, kind } = source;
  const when = localTimes(installation.timezone, booking.start, booking.end);
  const whenText = `${when.date}, ${when.from}–${when.to} (${when.zone})`;
  const who = customerName(source) || source.customer.email || 'a customer';
  const cancelled = CANCEL_KINDS.has(kind);
  const office = OFFICE_KINDS.has(kind);
  const moved = booking.movedFrom ? localTimes(installation.timezone, booking.movedFrom.start, booking.movedFrom.end) : null;
  const movedText = moved ? `${moved.date}, ${moved.from}–${moved.to}` : 'another time';
  const toCustomer = !office;

  const subject = headerText(
    {
      booking_confirmation: `Appointment confirmed: ${reason.name}, ${when.date} ${when.from}`,
      booking_notification: `New booking: ${who}, ${reason.name}, ${when.date} ${when.from}`,
      booking_cancellation: `Appointment cancelled: ${reason.name}, ${when.date} ${when.from}`,
      booking_reminder: `Reminder: ${reason.name}, ${when.date} ${when.from}`,
      booking_moved: `Appointment moved: ${reason.name}, ${when.date} ${when.from}`,
      customer_cancelled_notice: `Cancelled by the customer: ${who}, ${reason.name}, ${when.date} ${when.from}`,
      customer_moved_notice: `Moved by the customer: ${who}, ${reason.name}, now ${when.date} ${when.from}`,
      booking_cancellation_notification: `Cancelled: ${who}, ${reason.name}, ${when.date} ${when.from}`,
    }[kind],
    250,
  );

  const greeting = source.customer.firstName ? `Hello ${source.customer.firstName},` : 'Hello,';
  const intro = {
    booking_confirmation: `your appointment with ${installation.name} is confirmed.`,
    booking_notification: `${who} booked an appointment.`,
    booking_cancellation: `your appointment with ${installation.name} has been cancelled.`,
    booking_reminder: `this is a reminder of your appointment with ${installation.name}.`,
    booking_moved: `your appointment with ${installation.name} has been moved. The new time:`,
    customer_cancelled_notice: `${who} cancelled their appointment through the manage link.`,
    customer_moved_notice: `${who} moved their appointment through the manage link from ${movedText} to ${when.date}, ${when.from}–${when.to}.`,
    booking_cancellation_notification: `The appointment of ${who} was cancelled: the time is free again.`,
  }[kind];
  const facts: [string, string][] = [
    ['When', whenText],
    ['Reason', `${reason.name} (${reason.durationMinutes} minutes)`],
    ['Schedule', source.scheduleName],
    ['Reference', booking.detailsId],
    ...(kind === 'customer_cancelled_notice'
      ? ([["Customer's reason", booking.cancelReason || '(none given)']] as [string, string][])
      : []),
  ];
  const answers = kind === 'booking_notification' ? labelledAnswers(source) : [];
  const closing = office
    ? cancelled
      ? 'The attached calendar file removes it from a calendar.'
      : 'The attached calendar file adds it to a calendar.'
    : cancelled
      ? 'The attached calendar file removes it from your calendar.'
      : kind === 'booking_moved' || kind === 'booking_reminder'
        ? 'The attached calendar file updates it in your calendar.'
        : 'The attached calendar file adds it to your calendar.';
  const link = manageLink(source);
  const heading =
    kind === 'booking_notification'
      ? 'New booking'
      : kind === 'booking_cancellation_notification'
        ? 'Booking cancelled'
        : office
          ? 'Changed by the customer'
          : greeting;
  // every customer mail ends with how to reach the practice, beside the manage link
  const contact = toCustomer ? contactBlock(source.contact) : { text: [], html: [] };

  const width = Math.max(...facts.map(([k]) => k.length)) + 2;
  const text = [
    heading,
    '',
    intro,
    '',
    ...facts.map(([k, v]) => `${`${k}:`.padEnd(width)}${v}`),
    ...(answers.length ? ['', "Customer's answers:", ...answers.map((a) => `  ${a.label}: ${a.value.replace(/\n/g, '\n    ')}`)] : []),
    '',
    ...link.text,
    closing,
    ...contact.text,
    '',
    `-- ${installation.name}`,
    '',
  ].join('\n');

  const row = (k: string, v: string) =>
    `<tr><th align="left" valign="top" style="padding:2px 12px 2px 0">${escapeHtml(k)}</th><td style="padding:2px 0;white-space:pre-wrap">${escapeHtml(v)}</td></tr>`;
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family:sans-serif;line-height:1.4">',
    `<p>${escapeHtml(heading)}</p>`,
    `<p>${escapeHtml(intro)}</p>`,
    `<table>${facts.map(([k, v]) => row(k, v)).join('')}</table>`,
    ...(answers.length ? ["<h3>Customer's answers</h3>", `<table>${answers.map((a) => row(a.label, a.value)).join('')}</table>`] : []),
    ...link.html,
    `<p>${escapeHtml(closing)}</p>`,
    ...contact.html,
    `<p>— ${escapeHtml(installation.name)}</p>`,
    '</body></html>',
    '',
  ].join('\n');

  const method = cancelled ? 'CANCEL' : 'REQUEST';
  const calendar = calendarFile({
    method,
    uid: booking.detailsId,
    // each change raised the stored SEQUENCE, so the calendar replaces the event it has (a reminder repeats
    // it unchanged, so a calendar keeps the one it has); a cancellation must
    // carry a higher one than the request it cancels (bookings cancelled before migration 011 stored 0)
    sequence: Math.max(booking.sequence ?? 0, cancelled ? 1 : 0),
    start: booking.start,
    end: booking.end,
    stamp: cancelled ? (booking.cancelledAt ?? booking.createdAt) : booking.createdAt,
    location: singleLine(source.contact.address).trim(),
    summary: office ? `${reason.name}: ${who}` : `${reason.name} (${installation.name})`,
    description: facts.map(([k, v]) => `${k}: ${v}`).join('\n'),
    organizer: installation.notifyEmail ? { name: installation.name, email: installation.notifyEmail } : null,
    attendee: source.customer.email ? { name: customerName(source), email: source.customer.email } : null,
  });

  return {
    subject,
    fromName: headerText(installation.name, 100),
    replyTo: office ? source.customer.email : installation.notifyEmail || null,
    text,
    html,
    calendar: { method, filename: cancelled ? 'cancel.ics' : 'invite.ics', content: calendar },
  };
}
