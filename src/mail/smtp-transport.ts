// Sending one rendered message through an SMTP server (nodemailer). Which messages to send, and what to
// record afterwards, is the outbox delivery's business (src/app/outbox-delivery.ts).
import nodemailer, { type Transporter } from 'nodemailer';
import type { RenderedMessage } from './templates.js';

export interface OutgoingMail {
  /** envelope and From address */
  from: string;
  /** the one recipient, validated before queueing */
  to: string;
  message: RenderedMessage;
  /** the Message-ID header, stable per outbox row (outboxMessageId), so a duplicate is recognisable */
  messageId: string;
}

/**
 * The Message-ID of an outbox row: `<outbox-ID.DETAILS@DOMAIN>`, the same on every attempt, so that if a
 * message does go out twice (a crash between the server's acceptance and the 'sent' record) mail clients
 * and the operator see one message twice, not two messages. DOMAIN is the sender address's domain.
 */
export function outboxMessageId(outboxId: number, detailsId: string, from: string): string {
  const domain = (from.slice(from.lastIndexOf('@') + 1) || 'localhost').replace(/[^A-Za-z0-9.-]/g, '');
  const details = detailsId.replace(/[^A-Za-z0-9_-]/g, '');
  return `<outbox-${outboxId}.${details}@${domain || 'localhost'}>`;
}

export interface SmtpTransport {
  /** resolves once the SMTP server accepted the message; rejects on refusal, failure, or abort */
  send(mail: OutgoingMail, signal: AbortSignal): Promise<void>;
  close(): void;
}

export function mailOptions({ from, to, message, messageId }: OutgoingMail) {
  return {
    messageId,
    // addresses as objects: nodemailer encodes the name, and the address was validated before queueing
    from: { name: message.fromName, address: from },
    to: { name: '', address: to },
    ...(message.replyTo ? { replyTo: { name: '', address: message.replyTo } } : {}),
    subject: message.subject,
    text: message.text,
    html: message.html,
    attachments: [
      {
        filename: message.calendar.filename,
        content: message.calendar.content,
        contentType: `text/calendar; charset=utf-8; method=${message.calendar.method}`,
      },
    ],
    // never let a customer value pick other recipients
    envelope: { from, to: [to] },
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/**
 * A transport for the SMTP server at `url` (smtp://user:pass@host:port, smtps:// for implicit TLS; the only
 * query options are the documented ones, checked by core/settings.ts before a URL is saved or used). No connection, greeting or socket wait outlasts
 * `maxWaitMs`. Pooled: up to `maxConnections` connections are kept open and reused (a new connection,
 * with its greeting, EHLO and possibly TLS, cost about as much as the message itself); a send aborted by
 * its signal closes only the connection it was using.
 */
export function smtpTransport(url: string, maxWaitMs: number, maxConnections = 1): SmtpTransport {
  const transporter: Transporter = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections,
    // a pooled connection is closed after this many messages and replaced (nodemailer's default)
    maxMessages: 100,
    connectionTimeout: Math.min(30_000, maxWaitMs),
    greetingTimeout: Math.min(30_000, maxWaitMs),
    socketTimeout: Math.min(60_000, maxWaitMs),
  });
  return {
    async send(mail, signal) {
      await transporter.sendMail({ ...mailOptions(mail), signal });
    },
    close: () => transporter.close(),
  };
}

/** An SMTP failure as one line for the outbox and the log: code, response code, and the server's answer. */
export function describeSendError(error: unknown): string {
  if (error instanceof Error) {
    const e = error as Error & { responseCode?: number; response?: string; code?: string };
    return [e.code, e.responseCode, e.response ?? e.message].filter((x) => x !== undefined && x !== '').join(' ');
  }
  return String(error);
}
