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

/** A transport for one check from the E-mail page: no pool, and nothing waits longer than `maxWaitMs`. */
function oneShotTransport(url: string, maxWaitMs: number): Transporter {
  return nodemailer.createTransport({ url, connectionTimeout: maxWaitMs, greetingTimeout: maxWaitMs, socketTimeout: maxWaitMs });
}

/** Connects, says EHLO, does STARTTLS or TLS as the URL asks, and authenticates: sends nothing. */
export async function verifySmtp(url: string, maxWaitMs: number): Promise<void> {
  const transporter = oneShotTransport(url, maxWaitMs);
  try {
    await transporter.verify();
  } finally {
    transporter.close();
  }
}

/** Sends one plain message straight through the server (the E-mail page's test, not through the outbox). */
export async function sendDirect(
  url: string,
  maxWaitMs: number,
  mail: { from: string; fromName: string; to: string; subject: string; text: string },
): Promise<void> {
  const transporter = oneShotTransport(url, maxWaitMs);
  try {
    await transporter.sendMail({
      from: { name: mail.fromName, address: mail.from },
      to: { name: '', address: mail.to },
      subject: mail.subject,
      text: mail.text,
      envelope: { from: mail.from, to: [mail.to] },
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  } finally {
    transporter.close();
  }
}

/**
 * An SMTP failure in words an operator understands, with the server's own answer when there is one:
 * shown on the E-mail page after a test.
 */
export function plainSmtpError(error: unknown): string {
  const e = error as Error & { responseCode?: number; response?: string; code?: string; command?: string };
  const answer = e.response ? ` The server answered: "${e.response}".` : '';
  const cause = (e.message ?? String(error)).replace(/\s+/g, ' ');
  switch (e.code) {
    case 'EAUTH':
      return `The server refused the user name or password.${answer || ` (${cause})`}`;
    case 'ENOAUTH':
      return 'The server asks for a user name and password: fill in both.';
    case 'EENVELOPE':
      return `The server refused the sender or the recipient address.${answer || ` (${cause})`}`;
    case 'EMESSAGE':
      return `The server refused the message.${answer || ` (${cause})`}`;
    case 'ETLS':
      return `The encrypted connection (TLS) failed: check the security setting and port. (${cause})`;
    case 'ETIMEDOUT':
      return `The server did not answer in time: check the host and port, and whether a firewall blocks them. (${cause})`;
    case 'EDNS':
      return `The host name could not be found: check its spelling. (${cause})`;
    case 'ECONNECTION':
    case 'ESOCKET':
      if (/ECONNREFUSED/.test(cause)) return `Nothing accepts connections at that host and port: check both. (${cause})`;
      if (/certificate|SSL|TLS|wrong version/i.test(cause))
        return `The encrypted connection (TLS) failed: check the security setting and port. (${cause})`;
      return `The connection to the server failed. (${cause})`;
    default:
      return e.responseCode ? `The server refused.${answer}` : `The test failed: ${cause}`;
  }
}
