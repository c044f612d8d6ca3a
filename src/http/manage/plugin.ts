// The customer's manage page under /manage (docs/manage-link.md): no account, no session, no JavaScript.
// The link's token is the only credential; every page that cannot be shown for it (malformed, forged,
// unknown, cancelled, begun) is the same "not valid" page with the same status, so nothing tells a
// guesser whether a token exists. Its own headers (a strict CSP, no referrer: the token is in the path),
// its own form parsing and a rate limit per client address, all encapsulated in this plugin.
import type { InstallationSettings } from '../../core/settings.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import type { Db } from '../../db/connect.js';
import type { SnapshotCache } from '../../app/snapshot.js';
import {
  cancelByCustomer,
  freeDaysToMove,
  freeTimesToMove,
  InsideCutoff,
  isFormToken,
  localTimes,
  manageRateLimit,
  MAX_CANCEL_REASON,
  openManageLink,
  rescheduleBooking,
  type ManageView,
} from '../../app/manage-link.js';
import { InvalidInput, NotFound } from '../../core/errors.js';
import { controlCharacterProblem } from '../../core/text.js';
import { html, raw, type Markup } from '../admin/html.js';

export interface ManagePluginOptions {
  db: Db;
  snapshots: SnapshotCache;
  clock: () => number;
  /** shared with the API when REDIS_URL is set, so the limit holds across instances */
  rateLimits?: Parameters<typeof manageRateLimit>[0];
  /** requests per client address per minute; default MANAGE_RATE_LIMIT_PER_MINUTE */
  ratePerMinute?: number;
}

/** Generous for a person (a page, a day, a time, a confirmation), far too few to try tokens. */
export const MANAGE_RATE_LIMIT_PER_MINUTE = 60;

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  // the token is in the path: a page opened from here must not learn it
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  'x-robots-tag': 'noindex, nofollow',
};

const CSS = `*{box-sizing:border-box}
body{margin:0;font:1.0625rem/1.5 system-ui,sans-serif;color:#1a1a1a;background:#fff}
main{max-width:36rem;margin:0 auto;padding:1rem}
h1{font-size:1.4rem;margin:.5rem 0 1rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1.5rem}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
a{color:#0645ad}
.button,button{display:inline-block;font:inherit;padding:.6rem 1.1rem;margin:.25rem .5rem .25rem 0;border:2px solid #0b4f9c;border-radius:.3rem;background:#0b4f9c;color:#fff;text-decoration:none;cursor:pointer}
.button.secondary{background:#fff;color:#0b4f9c}
.danger{background:#a4161a;border-color:#a4161a}
a:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible{outline:3px solid #f5a300;outline-offset:2px}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
textarea{width:100%;font:inherit;padding:.5rem;border:1px solid #555;border-radius:.3rem}
ul.choices{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.5rem}
fieldset{border:0;padding:0;margin:0}legend{font-weight:600;margin-bottom:.5rem}
.times label{display:inline-flex;align-items:center;gap:.35rem;font-weight:400;margin:.25rem 1rem .25rem 0;padding:.4rem .6rem;border:1px solid #555;border-radius:.3rem}
.note{padding:.75rem 1rem;border-left:4px solid #0b4f9c;background:#eef4fb;margin:0 0 1rem}
.problem{border-left-color:#a4161a;background:#fbeeee}
footer{margin-top:2rem;color:#444;font-size:.95rem}`;

function layout(title: string, practice: string, body: Markup): string {
  return `<!doctype html>${
    html`<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${title} · ${practice}</title>
<link rel="stylesheet" href="/manage/assets/manage.css">
</head><body><main>
${body}
</main></body></html>`.text
  }`;
}

/** The same page for every link that does not work now, whatever the reason. */
function invalidPage(practice: string): string {
  return layout(
    'Link not valid',
    practice,
    html`<h1>This link is not valid</h1>
<p>This link cannot be used (any more). Appointments can be changed through their link until they begin, and not after they were cancelled.</p>
<p>For help, please contact ${practice} directly.</p>`,
  );
}

/** How to reach the practice: its name, e-mail and the contact details of its settings (as every customer mail shows them). */
function contact(settings: InstallationSettings): Markup {
  const { name, notifyEmail: email, phone, address, website } = settings;
  const web = /^https?:\/\//i.test(website) ? html`<a href="${website}">${website}</a>` : website;
  return html`<p>${name}${email ? html` · <a href="mailto:${email}">${email}</a>` : ''}${
    phone ? html` · <a href="tel:${phone.replace(/[^0-9+]/g, '')}">${phone}</a>` : ''
  }${address ? html`<br>${address}` : ''}${website ? html`<br>${web}` : ''}</p>`;
}

export async function managePlugin(app: FastifyInstance, options: ManagePluginOptions): Promise<void> {
  const { db, snapshots, clock } = options;
  const rate = manageRateLimit(options.rateLimits, options.ratePerMinute ?? MANAGE_RATE_LIMIT_PER_MINUTE);
  await app.register(formbody, { bodyLimit: 16 * 1024 });

  app.addHook('onRequest', async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
    const decision = await rate(request.ip, clock());
    if (!decision.allowed) {
      const practice = (await snapshots.current()).settings.name;
      return reply
        .code(429)
        .header('retry-after', String(decision.resetSeconds))
        .type('text/html; charset=utf-8')
        .send(layout('Too many requests', practice, html`<h1>Too many requests</h1><p>Please wait a minute and try again.</p>`));
    }
  });

  app.setErrorHandler(async (error, _request, reply) => {
    const practice = (await snapshots.current()).settings.name;
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 500) reply.log.error({ err: error }, 'manage page failed');
    const message =
      status === 413
        ? 'The form is too large.'
        : status < 500
          ? 'The request could not be read.'
          : 'Something went wrong. Please try again later.';
    return reply
      .code(status < 500 ? 400 : 500)
      .type('text/html; charset=utf-8')
      .send(layout('Error', practice, html`<h1>${message}</h1>`));
  });

  app.setNotFoundHandler(async (_request, reply) => {
    const practice = (await snapshots.current()).settings.name;
    return reply.code(404).type('text/html; charset=utf-8').send(invalidPage(practice));
  });

  app.get('/assets/manage.css', async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=300').send(CSS),
  );

  /** The page's booking, or the "not valid" page sent (then null). */
  async function opened(request: FastifyRequest, reply: FastifyReply): Promise<ManageView | null> {
    const { token } = request.params as { token: string };
    const view = await openManageLink(db, token, clock());
    if (view) return view;
    const practice = (await snapshots.current()).settings.name;
    await reply.code(404).type('text/html; charset=utf-8').send(invalidPage(practice));
    return null;
  }

  function appointment(view: ManageView, settings: { name: string; timezone: string }): Markup {
    const b = view.booking;
    const when = localTimes(settings.timezone, b.start, b.end);
    return html`<dl>
<dt>Date</dt><dd>${when.date}</dd>
<dt>Time</dt><dd>${when.from}–${when.to} <span>(${when.zone})</span></dd>
<dt>Reason</dt><dd>${b.reasonName}</dd>
<dt>With</dt><dd>${b.scheduleName}</dd>
<dt>Practice</dt><dd>${settings.name}</dd>
</dl>`;
  }

  function send(reply: FastifyReply, status: number, page: string) {
    return reply.code(status).type('text/html; charset=utf-8').send(page);
  }

  function insideCutoff(view: ManageView, settings: InstallationSettings): Markup {
    const hours = view.cutoffMinutes % 60 === 0 ? `${view.cutoffMinutes / 60} hours` : `${view.cutoffMinutes} minutes`;
    return html`<div class="note"><p>This appointment is less than ${hours} away: it can no longer be changed here. Please call the practice to cancel or move it.</p>
${contact(settings)}</div>`;
  }

  app.get('/:token', async (request, reply) => {
    const view = await opened(request, reply);
    if (!view) return reply;
    const { settings } = await snapshots.current();
    const moved = (request.query as { moved?: string }).moved === '1';
    const actions = view.canChange
      ? html`<p><a class="button" href="/manage/${view.token}/reschedule">Move to another time</a>
<a class="button secondary" href="/manage/${view.token}/cancel">Cancel this appointment</a></p>`
      : insideCutoff(view, settings);
    return send(
      reply,
      200,
      layout(
        'Your appointment',
        settings.name,
        html`${moved ? html`<div class="note" role="status"><p>Your appointment was moved. A confirmation is on its way by e-mail.</p></div>` : ''}
<h1>Your appointment</h1>
${appointment(view, settings)}
${actions}
<footer>${contact(settings)}</footer>`,
      ),
    );
  });

  app.get('/:token/cancel', async (request, reply) => {
    const view = await opened(request, reply);
    if (!view) return reply;
    const { settings } = await snapshots.current();
    if (!view.canChange)
      return send(reply, 200, layout('Cancel', settings.name, html`<h1>Cancel this appointment</h1>${insideCutoff(view, settings)}`));
    return send(reply, 200, layout('Cancel your appointment', settings.name, cancelForm(view, settings, null)));
  });

  function cancelForm(view: ManageView, settings: { name: string; timezone: string }, problem: string | null): Markup {
    return html`<h1>Cancel this appointment?</h1>
${problem ? html`<div class="note problem" role="alert"><p>${problem}</p></div>` : ''}
${appointment(view, settings)}
<form method="post" action="/manage/${view.token}/cancel">
<input type="hidden" name="form_token" value="${view.formToken}">
<label for="reason">Reason (optional)</label>
<textarea id="reason" name="reason" rows="3" maxlength="${MAX_CANCEL_REASON}"></textarea>
<p><button type="submit" class="danger">Yes, cancel the appointment</button>
<a class="button secondary" href="/manage/${view.token}">No, keep it</a></p>
</form>`;
  }

  function formField(body: unknown, name: string): string | null {
    const value = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
    if (typeof value !== 'string') return null;
    return value;
  }

  function refused(reply: FastifyReply, practice: string) {
    return send(
      reply,
      403,
      layout('Form expired', practice, html`<h1>This form has expired</h1><p>Please open the link from your e-mail again.</p>`),
    );
  }

  app.post('/:token/cancel', async (request, reply) => {
    const view = await opened(request, reply);
    if (!view) return reply;
    const snapshot = await snapshots.current();
    const { settings } = snapshot;
    if (!isFormToken(view, formField(request.body, 'form_token'))) return refused(reply, settings.name);
    const reason = formField(request.body, 'reason') ?? '';
    if (controlCharacterProblem(reason, true) !== null)
      return send(
        reply,
        400,
        layout('Cancel', settings.name, cancelForm(view, settings, 'The reason contains characters that cannot be stored.')),
      );
    try {
      await cancelByCustomer(db, snapshot, view, reason, clock());
    } catch (error) {
      if (error instanceof InsideCutoff) return reply.redirect(`/manage/${view.token}`, 303);
      if (error instanceof InvalidInput) return send(reply, 400, layout('Cancel', settings.name, cancelForm(view, settings, error.reason)));
      throw error;
    }
    // cancelled now or by an earlier submission: either way the link stops working, this page says what happened
    return reply.redirect('/manage/cancelled', 303);
  });

  app.get('/cancelled', async (_request, reply) => {
    const { settings } = await snapshots.current();
    return send(
      reply,
      200,
      layout(
        'Appointment cancelled',
        settings.name,
        html`<h1>Your appointment is cancelled</h1><p role="status">A confirmation is on its way by e-mail. The link in your e-mail no longer works.</p>
${contact(settings)}`,
      ),
    );
  });

  app.get('/:token/reschedule', async (request, reply) => {
    const view = await opened(request, reply);
    if (!view) return reply;
    const snapshot = await snapshots.current();
    const { settings } = snapshot;
    if (!view.canChange)
      return send(reply, 200, layout('Move', settings.name, html`<h1>Move this appointment</h1>${insideCutoff(view, settings)}`));
    const day = (request.query as { day?: string }).day;
    const back = html`<p><a href="/manage/${view.token}">Back to your appointment</a></p>`;
    try {
      if (typeof day === 'string') {
        const times = await freeTimesToMove(db, snapshot, view.booking, day, clock());
        if (times === null) return reply.redirect(`/manage/${view.token}/reschedule`, 303);
        return send(reply, 200, layout('Choose a time', settings.name, timesForm(view, settings, day, times, null, back)));
      }
      const days = await freeDaysToMove(db, snapshot, view.booking, clock());
      // a calendar date names itself: formatted in UTC, so no zone's offset can move it to another day
      const dayLabel = (d: string) => localTimes('UTC', Date.parse(`${d}T12:00:00Z`), Date.parse(`${d}T12:00:00Z`)).date;
      return send(
        reply,
        200,
        layout(
          'Choose a day',
          settings.name,
          html`<h1>Move your appointment</h1>
${appointment(view, settings)}
<h2>Choose a new day</h2>
${days.length ? html`<ul class="choices">${days.map((d) => html`<li><a class="button secondary" href="/manage/${view.token}/reschedule?day=${d}">${dayLabel(d)}</a></li>`)}</ul>` : html`<p>There are no free times to move to at the moment.</p>`}
${back}`,
        ),
      );
    } catch (error) {
      if (error instanceof NotFound)
        return send(
          reply,
          200,
          layout(
            'Move',
            settings.name,
            html`<h1>Move this appointment</h1><div class="note"><p>This appointment cannot be moved here. Please contact the practice.</p>${contact(settings)}</div>`,
          ),
        );
      throw error;
    }
  });

  function timesForm(
    view: ManageView,
    settings: { name: string; timezone: string },
    day: string,
    times: { slot: string; start: number }[],
    problem: string | null,
    back: Markup,
  ): Markup {
    const clock = (start: number) => localTimes(settings.timezone, start, start).from;
    return html`<h1>Choose a new time</h1>
${problem ? html`<div class="note problem" role="alert"><p>${problem}</p></div>` : ''}
${
  times.length
    ? html`<form method="post" action="/manage/${view.token}/reschedule">
<input type="hidden" name="form_token" value="${view.formToken}">
<fieldset class="times"><legend>Free times on ${localTimes(settings.timezone, times[0]!.start, times[0]!.start).date}</legend>
${times.map((t, i) => html`<label><input type="radio" name="slot" value="${t.slot}"${i === 0 ? raw(' required') : ''}> ${clock(t.start)}</label>`)}
</fieldset>
<p><button type="submit">Move my appointment</button></p>
</form>`
    : html`<p>No free times on ${day}.</p>`
}
<p><a href="/manage/${view.token}/reschedule">Choose another day</a></p>
${back}`;
  }

  app.post('/:token/reschedule', async (request, reply) => {
    const view = await opened(request, reply);
    if (!view) return reply;
    const snapshot = await snapshots.current();
    const { settings } = snapshot;
    if (!isFormToken(view, formField(request.body, 'form_token'))) return refused(reply, settings.name);
    const slot = formField(request.body, 'slot');
    if (slot === null) return reply.redirect(`/manage/${view.token}/reschedule`, 303);
    try {
      await rescheduleBooking(db, snapshot, view.booking.id, slot, clock(), 'customer');
    } catch (error) {
      if (error instanceof InsideCutoff) return reply.redirect(`/manage/${view.token}`, 303);
      if (error instanceof NotFound) {
        const day = slot.slice(0, 10);
        const times = (await freeTimesToMove(db, snapshot, view.booking, day, clock()).catch(() => null)) ?? [];
        const back = html`<p><a href="/manage/${view.token}">Back to your appointment</a></p>`;
        return send(
          reply,
          409,
          layout(
            'Choose a time',
            settings.name,
            timesForm(view, settings, day, times, 'That time is no longer free. Please choose another.', back),
          ),
        );
      }
      throw error;
    }
    return reply.redirect(`/manage/${view.token}?moved=1`, 303);
  });
}
