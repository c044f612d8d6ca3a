// Customers: a searchable list; each one's details (editable), staff notes, their bookings and answers;
// their data on request: a JSON export and erasure after a confirmation (docs/security.md).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidInput, NotFound } from '../../core/errors.js';
import { findCustomer, listBookings, listCustomers, type BookingRow, type CustomerRow } from '../../app/admin-bookings.js';
import {
  customerEditProblems,
  editCustomer,
  eraseCustomer,
  erasureCheck,
  exportCustomer,
  type CustomerEdit,
} from '../../app/admin-customers.js';
import { html } from './html.js';
import { confirmPage, csrfField, humanReason, input, page, textarea, type Errors } from './layout.js';
import { body, idParam, localTime, query, sendPage, state, visible, type AdminDeps } from './context.js';
import { bookingTable } from './bookings.js';
import { text } from './form-input.js';
import type { Snapshot } from '../../app/snapshot.js';

const EDIT_FIELDS: [keyof CustomerEdit, string][] = [
  ['firstName', 'First name'],
  ['lastName', 'Last name'],
  ['email', 'E-mail'],
  ['phone', 'Phone'],
  ['notes', 'Notes (staff only)'],
];

function answersTable(snapshot: Snapshot, bookings: readonly BookingRow[]) {
  const answered = bookings.filter((b) => Object.keys(b.answers).length > 0);
  if (answered.length === 0) return html`<p class="muted">No answers.</p>`;
  const labelOf = (b: BookingRow, name: string) => snapshot.schedules.get(b.scheduleId)?.form.find((f) => f.name === name)?.label ?? name;
  const shown = (v: unknown) => (v === true ? 'yes' : v === false ? 'no' : String(v));
  return html`<div class="table-wrap"><table id="customer-answers"><thead><tr><th>Booking</th><th>Answers</th></tr></thead><tbody>
${answered.map(
  (
    b,
  ) => html`<tr><td><a href="/admin/bookings/${b.detailsId}">${localTime(snapshot, b.start)}</a><br><span class="muted">${b.scheduleName}, ${b.reasonName}</span></td>
<td><dl class="answers">${Object.entries(b.answers).map(([k, v]) => html`<dt>${labelOf(b, k)}</dt><dd>${shown(v)}</dd>`)}</dl></td></tr>`,
)}
</tbody></table></div>`;
}

export async function customerRoutes(app: FastifyInstance, { db, clock }: AdminDeps): Promise<void> {
  app.get('/customers', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const search = query(request).q ?? '';
    const customers = await listCustomers(db, search, 200, visible(request));
    return sendPage(
      reply,
      page(
        ctx,
        'Customers',
        html`
<form method="get" action="/admin/customers" class="card row" role="search">
${input('Search by name, e-mail or phone', 'q', search, {}, { type: 'search' })}<button>Search</button></form>
${
  customers.length === 0
    ? html`<p class="muted">No customers${search ? ' match this search' : ' yet'}.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th>Name</th><th>E-mail</th><th>Phone</th><th>Bookings</th><th>Since</th></tr></thead><tbody>
${customers.map((c) => html`<tr><td><a href="/admin/customers/${c.id}">${displayName(c)}</a></td><td>${c.email ?? ''}</td><td>${c.phone}</td><td>${c.bookings}</td><td>${localTime(snapshot, c.createdAt).slice(0, 10)}</td></tr>`)}
</tbody></table></div>`
}`,
      ),
    );
  });

  const customerOf = async (request: FastifyRequest): Promise<CustomerRow> => {
    const id = idParam((request.params as { id?: string }).id);
    const customer = id === null ? null : await findCustomer(db, id, visible(request));
    if (!customer) throw new NotFound('Customer not found');
    return customer;
  };

  const customerPage = async (request: FastifyRequest, customer: CustomerRow, values: CustomerEdit, errors: Errors, flash?: string) => {
    const { page: ctx, snapshot } = state(request);
    const bookings = await listBookings(db, { customerId: customer.id, includeCancelled: true, scheduleIds: visible(request) }, clock());
    const base = `/admin/customers/${customer.id}`;
    if (customer.erasedAt !== null) {
      return page(
        ctx,
        displayName(customer),
        html`<p class="alert" id="erased">This customer's personal data was erased on request on ${localTime(snapshot, customer.erasedAt)}. Their bookings stay, without name, contact or answers, for the statistics.</p>
<h2>Bookings</h2>${bookingTable(snapshot, bookings)}`,
        { flash },
      );
    }
    return page(
      ctx,
      displayName(customer),
      html`
<form method="post" action="${base}" class="card" id="customer-form" novalidate>${csrfField(ctx)}
<div class="row">${EDIT_FIELDS.filter(([k]) => k !== 'notes').map(([k, label]) =>
        input(label, k, values[k], errors, { type: k === 'email' ? 'email' : k === 'phone' ? 'tel' : 'text' }),
      )}</div>
${textarea('Notes (staff only)', 'notes', values.notes, errors, { hint: 'Never shown to the customer nor sent anywhere; part of their data export.', rows: 3 })}
<button>Save customer</button></form>
<p class="muted">Customer since ${localTime(snapshot, customer.createdAt)}. Bookings are matched to this customer by the e-mail address (any case).</p>
<h2>Bookings</h2>${bookingTable(snapshot, bookings)}
<h2>Answers</h2>${answersTable(snapshot, bookings)}
${
  visible(request) === null
    ? html`<h2>Their data (GDPR)</h2>
<section class="actions"><a class="button secondary" href="${base}/export" download>Export data (JSON)</a>
<a class="button secondary" href="${base}/erase">Erase personal data…</a></section>`
    : ''
}`,
      { errors, labels: Object.fromEntries(EDIT_FIELDS), flash },
    );
  };

  app.get('/customers/:id', async (request, reply) => {
    const customer = await customerOf(request);
    const saved = query(request).saved;
    const flash = saved === 'edited' ? 'Customer saved.' : saved === 'erased' ? 'Personal data erased.' : undefined;
    const values = {
      firstName: customer.firstName,
      lastName: customer.lastName,
      email: customer.email ?? '',
      phone: customer.phone,
      notes: customer.notes,
    };
    return sendPage(reply, await customerPage(request, customer, values, {}, flash));
  });

  app.post('/customers/:id', async (request, reply) => {
    const customer = await customerOf(request);
    const raw = body(request);
    const values = Object.fromEntries(EDIT_FIELDS.map(([k]) => [k, text(raw, k)])) as unknown as CustomerEdit;
    const problems: Record<string, string> = { ...customerEditProblems(values) };
    if (Object.keys(problems).length === 0) {
      try {
        await editCustomer(db, customer.id, values, clock());
        return reply.redirect(`/admin/customers/${customer.id}?saved=edited`, 303);
      } catch (error) {
        if (!(error instanceof InvalidInput)) throw error;
        problems[error.path || 'email'] = humanReason(error.reason);
      }
    }
    return sendPage(reply, await customerPage(request, customer, values, problems), 400);
  });

  app.get('/customers/:id/export', async (request, reply) => {
    const customer = await customerOf(request);
    const data = await exportCustomer(db, customer.id, clock());
    return reply
      .type('application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="customer-${customer.id}.json"`)
      .send(JSON.stringify(data, null, 2));
  });

  app.get('/customers/:id/erase', async (request, reply) => {
    const { page: ctx } = state(request);
    const customer = await customerOf(request);
    const base = `/admin/customers/${customer.id}`;
    if (customer.erasedAt !== null) return reply.redirect(base, 303);
    const check = await erasureCheck(db, customer.id, clock());
    if (!check.ok) {
      return sendPage(
        reply,
        page(
          ctx,
          'Erase personal data?',
          html`<p class="alert" id="erase-refused">${displayName(customer)} has ${check.upcoming} upcoming appointment${check.upcoming === 1 ? '' : 's'}. Cancel ${check.upcoming === 1 ? 'it' : 'them'} first (the customer is e-mailed a cancellation), then erase: an appointment without a customer to expect or to tell of a change would help nobody.</p>
<p><a class="button secondary" href="${base}">Back to the customer</a></p>`,
        ),
        409,
      );
    }
    return sendPage(
      reply,
      confirmPage(
        ctx,
        'Erase personal data?',
        html`<p>All personal data of <strong>${displayName(customer)}</strong>${customer.email ? html` (${customer.email})` : ''} will be removed, at once and for good:</p>
<ul><li>name, e-mail address, phone and notes are emptied;</li>
<li>the answers of every booking of theirs are cleared;</li>
<li>the e-mails addressed to them (sent or waiting) are deleted; webhook deliveries about their bookings keep only the event, and those still waiting are not sent;</li>
<li>their bookings stay, without anyone's name, for the statistics: schedule, reason, time, status, how they were made.</li></ul>
<p>Export their data first if they asked for a copy. This cannot be undone.</p>`,
        `${base}/erase`,
        'Confirm erasure',
        base,
      ),
    );
  });

  app.post('/customers/:id/erase', async (request, reply) => {
    const customer = await customerOf(request);
    try {
      await eraseCustomer(db, customer.id, clock());
    } catch (error) {
      // an appointment was booked since the confirmation page: it says why
      if (error instanceof InvalidInput) return reply.redirect(`/admin/customers/${customer.id}/erase`, 303);
      throw error;
    }
    return reply.redirect(`/admin/customers/${customer.id}?saved=erased`, 303);
  });
}

function displayName(c: CustomerRow): string {
  if (c.erasedAt !== null) return `Customer ${c.id} (erased)`;
  return c.name || c.email || `Customer ${c.id}`;
}
