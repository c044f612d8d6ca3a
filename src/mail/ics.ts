// iCalendar (RFC 5545) for one appointment, as an iTIP message (RFC 5546): METHOD:REQUEST when booked,
// METHOD:CANCEL with the same UID and a higher SEQUENCE when cancelled, so calendar clients update the
// event they already have instead of adding a second one.
import { formatUtc } from '../core/time/calendar.js';
import { singleLine } from '../core/text.js';

export interface CalendarEvent {
  method: 'REQUEST' | 'CANCEL';
  /** the booking's details_id: stable across the request and its cancellation */
  uid: string;
  sequence: number;
  start: number;
  end: number;
  /** when this version of the event was made (booking or cancellation time): keeps rendering pure */
  stamp: number;
  summary: string;
  description: string;
  /** the practice's address, or '' for none */
  location?: string;
  organizer: { name: string; email: string } | null;
  attendee: { name: string; email: string } | null;
}

/** 20260602T070000Z */
const icsUtc = (instant: number) => formatUtc(instant).replace(/[-:]/g, '');

/** TEXT value escaping (RFC 5545 §3.3.11); other control characters cannot appear in a content line. */
export function escapeText(value: string): string {
  return value
    .replace(/\r\n?/g, '\n')
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, ' ')
    .replace(/\\/g, '\\\\')
    .replace(/;/g, '\\;')
    .replace(/,/g, '\\,')
    .replace(/\n/g, '\\n');
}

/** A parameter value (e.g. CN) is quoted; DQUOTE and controls cannot be represented in it, so they go. */
const paramValue = (value: string) => `"${singleLine(value).replace(/"/g, ' ').trim()}"`;

/** The address of a mailto: URI: one line, no spaces (a validated address has none; stored data may predate that). */
const mailto = (email: string) => `mailto:${singleLine(email).replace(/[ "]/g, '')}`;

/**
 * Lines longer than 75 octets are folded (§3.1): CRLF followed by one space. The cut never splits
 * a UTF-8 sequence, so every line stays valid UTF-8.
 */
export function foldLine(line: string): string {
  const parts: string[] = [];
  let current = '';
  let octets = 0;
  for (const ch of line) {
    const size = Buffer.byteLength(ch, 'utf8');
    // the first line may hold 75 octets; continuation lines 74 after their leading space
    const limit = parts.length === 0 ? 75 : 74;
    if (octets + size > limit) {
      parts.push(current);
      current = '';
      octets = 0;
    }
    current += ch;
    octets += size;
  }
  parts.push(current);
  return parts.join('\r\n ');
}

export function calendarFile(event: CalendarEvent): string {
  const person = (role: 'ORGANIZER' | 'ATTENDEE', p: { name: string; email: string }, extra = '') =>
    `${role};CN=${paramValue(p.name || p.email)}${extra}:${mailto(p.email)}`;
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//booking//appointment scheduler//EN',
    'CALSCALE:GREGORIAN',
    `METHOD:${event.method}`,
    'BEGIN:VEVENT',
    `UID:${escapeText(event.uid)}`,
    `SEQUENCE:${event.sequence}`,
    `DTSTAMP:${icsUtc(event.stamp)}`,
    `DTSTART:${icsUtc(event.start)}`,
    `DTEND:${icsUtc(event.end)}`,
    `SUMMARY:${escapeText(event.summary)}`,
    `DESCRIPTION:${escapeText(event.description)}`,
    ...(event.location ? [`LOCATION:${escapeText(event.location)}`] : []),
    `STATUS:${event.method === 'CANCEL' ? 'CANCELLED' : 'CONFIRMED'}`,
    ...(event.organizer ? [person('ORGANIZER', event.organizer)] : []),
    ...(event.attendee ? [person('ATTENDEE', event.attendee, ';ROLE=REQ-PARTICIPANT')] : []),
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  return `${lines.map(foldLine).join('\r\n')}\r\n`;
}
