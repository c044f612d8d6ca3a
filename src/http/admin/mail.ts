// E-mail: the SMTP server and sender, and the outbox. Every booking queues its messages there; the worker
// sends them through SMTP_URL or the server saved here, otherwise they stay here, readable. "Retry now"
// makes a waiting or given-up message due at once. The server is edited as fields (host, port, security,
// user, password) that build the one stored URL; the saved password is never shown: the field shows a mask,
// and the mask saved with the other fields unchanged keeps the stored password. Test connection and Send a
// test e-mail answer on the page itself (they change nothing, so there is nothing to redirect to).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFound } from '../../core/errors.js';
import {
  countMessages,
  discardAllWaiting,
  discardMessage,
  listMessages,
  mailHealth,
  previewMessage,
  retryMessage,
} from '../../app/outbox.js';
import { DISCARDABLE_STATES, MESSAGE_STATES, mailRecipient, type MessageState } from '../../core/messages.js';
import {
  saveSendingSettings,
  SendingChecks,
  smtpUrlOfFields,
  type CheckOutcome,
  type SendingSettingsErrors,
} from '../../app/sending-settings.js';
import { SMTP_SECURITY, smtpFieldsFromUrl, type SmtpFields, type SmtpSecurity } from '../../core/smtp-fields.js';
import { text } from './form-input.js';
import { maskSmtpUrl, PASSWORD_MASK } from '../../core/settings.js';
import { html, type Markup } from './html.js';
import { confirmPage, csrfField, input, page, select, type Errors } from './layout.js';
import type { Db } from '../../db/connect.js';
import type { Snapshot } from '../../app/snapshot.js';
import { body, idParam, localTime, query, sendPage, state, type AdminDeps } from './context.js';

/** The e-mail preview's own headers (replacing the admin pages' CSP and X-Frame-Options: DENY for this document). */
export const PREVIEW_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'; sandbox",
  'x-frame-options': 'SAMEORIGIN',
};

/** SMTP_URL and MAIL_FROM as src/config.ts read them from the environment; when set they win over what is saved here. */
export interface FixedMailSettings {
  smtpUrl: string | null;
  mailFrom: string | null;
  /** PUBLIC_URL: the base of the manage links in customer mail; null: mails carry none (docs/manage-link.md) */
  publicUrl?: string | null;
}

function fixedField(label: string, name: string, value: string, variable: string): Markup {
  return html`<div class="field"><label for="${name}">${label}</label>
<input id="${name}" type="text" value="${value}" readonly><small>Set by ${variable} in the environment, which takes precedence: change it there.</small></div>`;
}

/**
 * The warning shown on the Bookings page (and the E-mail page) while mail is not going out: no SMTP server,
 * or sending failing. Nothing when mail flows.
 */
export async function mailWarning(db: Db, snapshot: Snapshot, fixed: FixedMailSettings): Promise<Markup | ''> {
  const health = await mailHealth(db, Boolean(fixed.smtpUrl || snapshot.settings.smtpUrl));
  const waiting = `${health.waiting} message${health.waiting === 1 ? '' : 's'}`;
  if (health.noServer)
    return html`<div class="alert" role="status" id="mail-warning"><p><strong>E-mail is not being sent: no SMTP server is configured.</strong>
Customers get no confirmations or cancellations; ${waiting} wait${health.waiting === 1 ? 's' : ''} in the outbox.
<a href="/admin/mail#smtp">Set up sending</a> or <a href="/admin/mail#outbox">review the outbox</a>.</p></div>`;
  if (health.failing > 0)
    return html`<div class="danger" role="status" id="mail-warning"><p><strong>E-mail is failing:</strong> ${health.failing} message${health.failing === 1 ? '' : 's'} could not be sent${health.lastError ? html` (last error: ${health.lastError})` : ''}.
<a href="/admin/mail#outbox">Review the outbox</a>.</p></div>`;
  return '';
}

const SECURITY_LABELS: Readonly<Record<SmtpSecurity, string>> = {
  starttls: 'STARTTLS (port 587, required)',
  tls: 'TLS (port 465)',
  none: 'None (a local relay only)',
};
const SMTP_FIELD_NAMES = ['host', 'port', 'security', 'user', 'password'] as const;
const FIELD_LABELS = {
  smtp_host: 'Host',
  smtp_port: 'Port',
  smtp_security: 'Security',
  smtp_user: 'User',
  smtp_password: 'Password',
  mail_from: 'Sender address',
  test_to: 'Send to',
};

/** The errors of the form, each a sentence. */
function messages(invalid: SendingSettingsErrors): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const [field, e] of Object.entries(invalid))
    if (e)
      errors[field] =
        field === 'mail_from'
          ? 'Must be an e-mail address, such as appointments@example.com.'
          : `${e.message.charAt(0).toUpperCase()}${e.message.slice(1)}.`;
  return errors;
}

/** The result of a test, as a notice at the top of its section (role=status: read out when shown). */
function outcomeMarkup(id: string, outcome: CheckOutcome, success: string, failure: string): Markup {
  if (outcome.ok) return html`<p class="flash" role="status" id="${id}">${success}</p>`;
  if ('throttled' in outcome)
    return html`<p class="danger" role="status" id="${id}">${failure}: too many tests in a short time. Try again in ${Math.ceil(outcome.throttled / 60)} minute${outcome.throttled > 60 ? 's' : ''}.</p>`;
  return html`<p class="danger" role="status" id="${id}">${failure}: ${outcome.error}</p>`;
}

export async function mailRoutes(app: FastifyInstance, { db, clock }: AdminDeps, fixed: FixedMailSettings): Promise<void> {
  const environment = () => ({ smtpUrl: fixed.smtpUrl ?? '', mailFrom: fixed.mailFrom ?? '' });
  const checks = new SendingChecks();

  function smtpSection(request: FastifyRequest, values: Record<string, string>, errors: Errors, result?: Markup): Markup {
    const { page: ctx, snapshot } = state(request);
    const saved = snapshot.settings;
    const env = environment();
    const status = env.smtpUrl
      ? html`<p class="muted" id="smtp-status">Outgoing mail is sent through the SMTP server in SMTP_URL (set in the environment; it takes precedence over a server saved here).</p>`
      : saved.smtpUrl
        ? html`<p class="muted" id="smtp-status">Outgoing mail is sent through the SMTP server saved below.</p>`
        : html`<p class="alert" id="smtp-status">No SMTP server is configured: mail is kept in the outbox below and sent once one is saved here (or SMTP_URL is set).</p>`;
    const links = fixed.publicUrl
      ? html`<p class="muted" id="manage-link-status">Customer mail carries a link to cancel or move the appointment, at ${fixed.publicUrl}/manage/… (PUBLIC_URL).</p>`
      : html`<p class="alert" id="manage-link-status">Customer mail carries no link to cancel or move the appointment: set PUBLIC_URL in the environment to the address customers reach this installation at (docs/manage-link.md).</p>`;
    const shown = smtpFieldsFromUrl(saved.smtpUrl);
    const value = (name: keyof SmtpFields) => values[`smtp_${name}`] ?? shown[name];
    return html`<h2 id="smtp">Sending</h2><section>${status}${links}${result ?? ''}
<form method="post" action="/admin/mail/smtp">${csrfField(ctx)}
${
  env.smtpUrl
    ? fixedField('SMTP server', 'smtp_url', maskSmtpUrl(env.smtpUrl), 'SMTP_URL')
    : html`<fieldset class="smtp-fields"><legend>SMTP server</legend>
${input('Host', 'smtp_host', value('host'), errors, { placeholder: 'mail.example.com', autocomplete: 'off', hint: 'Empty: send nothing (mail waits in the outbox).' })}
${select(
  'Security',
  'smtp_security',
  value('security'),
  SMTP_SECURITY.map((s): [string, string] => [s, SECURITY_LABELS[s]]),
  errors,
)}
${input('Port', 'smtp_port', value('port'), errors, { type: 'text', placeholder: '587', autocomplete: 'off', hint: 'Empty: 587 with STARTTLS, 465 with TLS, 25 with none.' })}
${input('User', 'smtp_user', value('user'), errors, { autocomplete: 'off' })}
${input('Password', 'smtp_password', value('password'), errors, {
  type: 'password',
  autocomplete: 'new-password',
  hint: `The saved password is shown as ${PASSWORD_MASK}; it is kept only while host, port, security and user stay the same.`,
})}</fieldset>`
}
${
  env.mailFrom
    ? fixedField('Sender address', 'mail_from', env.mailFrom, 'MAIL_FROM')
    : input('Sender address', 'mail_from', values.mail_from ?? saved.mailFrom, errors, {
        type: 'email',
        hint: 'Envelope and From of every message. Empty: the notification address.',
      })
}
<div class="row">${env.smtpUrl && env.mailFrom ? '' : html`<button name="action" value="save">Save sending settings</button>`}
<button class="secondary" name="action" value="test" id="test-connection">Test connection</button></div>
<p class="muted">Test connection connects and signs in with ${env.smtpUrl ? 'SMTP_URL' : 'the settings above (saved or not)'}, and sends nothing.</p>
</form></section>`;
  }

  function testSendSection(request: FastifyRequest, to: string, errors: Errors, result?: Markup): Markup {
    const { page: ctx, snapshot } = state(request);
    return html`<h2 id="test-send">Send a test e-mail</h2><section>${result ?? ''}
<form method="post" action="/admin/mail/test-send">${csrfField(ctx)}
${input('Send to', 'test_to', to || snapshot.settings.notifyEmail, errors, { type: 'email', hint: "Sent at once through the SMTP server in use (not through the outbox); the server's answer is shown here." })}
<button>Send a test e-mail</button></form></section>`;
  }

  interface Results {
    smtp?: Markup;
    testSend?: Markup;
  }

  async function mailPage(
    request: FastifyRequest,
    values: Record<string, string>,
    errors: Errors,
    flash?: string,
    results: Results = {},
  ): Promise<string> {
    const { page: ctx, snapshot } = state(request);
    const q = query(request);
    const chosen = (MESSAGE_STATES as readonly string[]).includes(q.state ?? '') ? (q.state as MessageState) : undefined;
    const [messages, counts] = await Promise.all([listMessages(db, { state: chosen, limit: 200 }), countMessages(db)]);
    const waiting = DISCARDABLE_STATES.reduce((n, s) => n + (counts[s] ?? 0), 0);
    return page(
      ctx,
      'E-mail',
      html`${await mailWarning(db, snapshot, fixed)}${smtpSection(request, values, errors, results.smtp)}
${testSendSection(request, values.test_to ?? '', errors, results.testSend)}
<h2 id="outbox">Outbox</h2>
<p>${MESSAGE_STATES.map((s) => html`<span class="muted">${s}: ${counts[s] ?? 0}</span> · `)}</p>
<p class="muted">A message whose moment has passed (a confirmation of a cancelled or begun appointment, a cancellation of a past one) is not sent: it ends "skipped", with the reason.</p>
${waiting > 0 ? html`<p><a class="button secondary" href="/admin/mail/discard">Discard all ${waiting} waiting message${waiting === 1 ? '' : 's'}…</a></p>` : ''}
<form method="get" action="/admin/mail" class="card row">
${select('State', 'state', chosen ?? '', [['', 'All'], ...MESSAGE_STATES.map((s): [string, string] => [s, s])], {})}<button>Show</button></form>
${
  messages.length === 0
    ? html`<p class="muted">No messages.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th>Queued</th><th>Kind</th><th>To</th><th>State</th><th>Attempts</th><th>Last error or why skipped</th></tr></thead><tbody>
${messages.map((m) => html`<tr><td><a href="/admin/mail/${m.id}">${localTime(snapshot, m.createdAt)}</a></td><td>${m.kind}</td><td>${m.recipient}</td><td>${m.state}</td><td>${m.attempts}</td><td>${m.state === 'skipped' ? `Skipped: ${m.skipReason ?? ''}` : (m.lastError ?? '')}</td></tr>`)}
</tbody></table></div>`
}`,
      { flash, errors, labels: FIELD_LABELS },
    );
  }

  app.get('/mail', async (request, reply) => {
    const saved = query(request).saved;
    return sendPage(
      reply,
      await mailPage(
        request,
        {},
        {},
        saved === 'retry'
          ? 'The message will be tried again at once.'
          : saved === 'smtp'
            ? 'Sending settings saved.'
            : saved === 'discarded'
              ? 'The waiting messages were discarded: they will not be sent.'
              : undefined,
      ),
    );
  });

  app.post('/mail/smtp', async (request, reply) => {
    const form = body(request);
    const env = environment();
    const stored = state(request).snapshot.settings.smtpUrl;
    const typed: Record<string, string> = { mail_from: text(form, 'mail_from').trim() };
    for (const name of SMTP_FIELD_NAMES) typed[`smtp_${name}`] = text(form, `smtp_${name}`);
    const fields: SmtpFields = {
      host: typed.smtp_host!,
      port: typed.smtp_port!,
      security: typed.smtp_security as SmtpSecurity,
      user: typed.smtp_user!,
      password: typed.smtp_password!,
    };
    // never a password in clear back on the page: a newly typed one must be typed again (shown as the mask,
    // it would stand for the stored password instead)
    const shown = { ...typed, smtp_password: typed.smtp_password === PASSWORD_MASK ? PASSWORD_MASK : '' };

    if (text(form, 'action') === 'test') {
      const url = env.smtpUrl || smtpUrlOfFields(fields, stored);
      if (typeof url !== 'string') return sendPage(reply, await mailPage(request, shown, messages(url)), 400);
      if (url === '') return sendPage(reply, await mailPage(request, shown, { smtp_host: 'Fill in the host to test a server.' }), 400);
      const outcome = await checks.testConnection(url, clock());
      return sendPage(
        reply,
        await mailPage(request, shown, {}, undefined, {
          smtp: outcomeMarkup(
            'smtp-result',
            outcome,
            new URL(url).username
              ? 'Connection test passed: the server answered and accepted the sign-in. Nothing was sent.'
              : 'Connection test passed: the server answered. No sign-in was tried (no user given). Nothing was sent.',
            'Connection test failed',
          ),
        }),
        outcome.ok ? 200 : 'throttled' in outcome ? 429 : 200,
      );
    }

    const invalid = await saveSendingSettings(
      db,
      { smtp: fields, mailFrom: typed.mail_from! },
      { smtpUrl: env.smtpUrl !== '', mailFrom: env.mailFrom !== '' },
      stored,
    );
    if (Object.keys(invalid).length) return sendPage(reply, await mailPage(request, shown, messages(invalid)), 400);
    return reply.redirect('/admin/mail?saved=smtp', 303);
  });

  app.post('/mail/test-send', async (request, reply) => {
    const form = body(request);
    const { snapshot } = state(request);
    const env = environment();
    const to = text(form, 'test_to').trim();
    const values = { test_to: to };
    const url = env.smtpUrl || snapshot.settings.smtpUrl;
    if (!mailRecipient(to))
      return sendPage(reply, await mailPage(request, values, { test_to: 'Must be an e-mail address, such as office@example.com.' }), 400);
    if (url === '')
      return sendPage(reply, await mailPage(request, values, { test_to: 'No SMTP server is configured: save one above first.' }), 400);
    const from = env.mailFrom || snapshot.settings.mailFrom || snapshot.settings.notifyEmail;
    const outcome = await checks.sendTest(url, { from, fromName: snapshot.settings.name || 'Booking', to }, clock());
    return sendPage(
      reply,
      await mailPage(request, values, {}, undefined, {
        testSend: outcomeMarkup(
          'test-send-result',
          outcome,
          `Accepted: the SMTP server took the test message to ${to}. Check that it arrives.`,
          'Not sent',
        ),
      }),
      outcome.ok ? 200 : 'throttled' in outcome ? 429 : 200,
    );
  });

  app.get('/mail/:id', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('Message not found');
    const preview = await previewMessage(db, id, fixed.publicUrl ?? null);
    const m = preview.message;
    const q = query(request);
    return sendPage(
      reply,
      page(
        ctx,
        `Message: ${preview.subject}`,
        html`
<section><dl><dt>To</dt><dd>${m.recipient}</dd><dt>State</dt><dd>${m.state} (${m.attempts} attempt${m.attempts === 1 ? '' : 's'})</dd>
${m.lastError ? html`<dt>Last error</dt><dd>${m.lastError}</dd>` : ''}${m.state === 'skipped' ? html`<dt>Not sent</dt><dd id="skip-reason">${m.skipReason ?? ''}</dd>` : ''}
<dt>Queued</dt><dd>${localTime(snapshot, m.createdAt)}</dd>${m.sentAt ? html`<dt>Sent</dt><dd>${localTime(snapshot, m.sentAt)}</dd>` : ''}
${m.detailsId ? html`<dt>Booking</dt><dd><a href="/admin/bookings/${m.detailsId}">${m.detailsId}</a></dd>` : ''}</dl>
${
  (DISCARDABLE_STATES as readonly string[]).includes(m.state)
    ? html`<form method="post" action="/admin/mail/${m.id}/retry" class="row">${csrfField(ctx)}<button>Retry now</button>
<a class="button secondary" href="/admin/mail/${m.id}/discard">Discard…</a></form>`
    : ''
}</section>
<h2>Text</h2><section><pre class="mail-text">${preview.text}</pre></section>
<h2>HTML</h2><section><iframe title="HTML version of the message" sandbox="" src="/admin/mail/${m.id}/preview" width="100%" height="400"></iframe></section>
<h2>Calendar attachment</h2><section><p>${preview.calendar.filename} (${preview.calendar.method})</p></section>`,
        {
          flash:
            q.saved === 'retry'
              ? 'The message will be tried again at once.'
              : q.saved === 'discarded'
                ? 'Message discarded: it will not be sent.'
                : undefined,
        },
      ),
    );
  });

  // The iframe's document: the message's HTML as it is sent, with a policy of its own. The admin pages' CSP
  // (no inline styles) would restyle the message; this one allows its inline styles and nothing that runs
  // or loads: no script, no external image, font or stylesheet, no form, no plugin, and `sandbox` makes the
  // document an opaque origin even when opened outside the iframe. Framed only by the admin area itself.
  app.get('/mail/:id/preview', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('Message not found');
    const preview = await previewMessage(db, id, fixed.publicUrl ?? null);
    return reply.headers(PREVIEW_HEADERS).type('text/html; charset=utf-8').send(preview.html);
  });

  app.get('/mail/discard', async (request, reply) => {
    const counts = await countMessages(db);
    const waiting = DISCARDABLE_STATES.reduce((n, s) => n + (counts[s] ?? 0), 0);
    return sendPage(
      reply,
      confirmPage(
        state(request).page,
        'Discard all waiting messages?',
        html`<p><strong>${waiting}</strong> message${waiting === 1 ? '' : 's'} waiting in the outbox (queued, retrying or given up) will never be sent:</p>
<ul><li>customers get none of these confirmations or cancellations, the office none of these notifications;</li>
<li>each stays in the outbox, marked "skipped: discarded by the operator"; new bookings queue their messages as usual.</li></ul>`,
        '/admin/mail/discard',
        'Confirm: discard all waiting messages',
        '/admin/mail#outbox',
      ),
    );
  });

  app.post('/mail/discard', async (_request, reply) => {
    await discardAllWaiting(db, clock());
    return reply.redirect('/admin/mail?saved=discarded#outbox', 303);
  });

  app.get('/mail/:id/discard', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('Message not found');
    const m = (await previewMessage(db, id)).message;
    return sendPage(
      reply,
      confirmPage(
        state(request).page,
        'Discard this message?',
        html`<p>The ${m.kind.replaceAll('_', ' ')} to <strong>${m.recipient}</strong> will never be sent. It stays in the outbox, marked "skipped: discarded by the operator".</p>`,
        `/admin/mail/${m.id}/discard`,
        'Confirm: discard this message',
        `/admin/mail/${m.id}`,
      ),
    );
  });

  app.post('/mail/:id/discard', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('Message not found');
    await discardMessage(db, id, clock());
    return reply.redirect(`/admin/mail/${id}?saved=discarded`, 303);
  });

  app.post('/mail/:id/retry', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('Message not found');
    await retryMessage(db, id, clock());
    return reply.redirect(`/admin/mail/${id}?saved=retry`, 303);
  });
}
