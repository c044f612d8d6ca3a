// Customers: a searchable list and each one's details with their bookings.
import type { FastifyInstance } from 'fastify';
import { NotFound } from '../../core/errors.js';
import { findCustomer, listBookings, listCustomers } from '../../app/admin-bookings.js';
import { html } from './html.js';
import { input, page } from './layout.js';
import { idParam, localTime, query, sendPage, state, type AdminDeps } from './context.js';
import { bookingTable } from './bookings.js';

export async function customerRoutes(app: FastifyInstance, { db, clock }: AdminDeps): Promise<void> {
  app.get('/customers', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const search = query(request).q ?? '';
    const customers = await listCustomers(db, search);
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
${customers.map((c) => html`<tr><td><a href="/admin/customers/${c.id}">${c.name || `Customer ${c.id}`}</a></td><td>${c.email ?? ''}</td><td>${c.phone}</td><td>${c.bookings}</td><td>${localTime(snapshot, c.createdAt).slice(0, 10)}</td></tr>`)}
</tbody></table></div>`
}`,
      ),
    );
  });

  app.get('/customers/:id', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const id = idParam((request.params as { id?: string }).id);
    const customer = id === null ? null : await findCustomer(db, id);
    if (!customer) throw new NotFound('Customer not found');
    const bookings = await listBookings(db, { customerId: customer.id, includeCancelled: true }, clock());
    return sendPage(
      reply,
      page(
        ctx,
        customer.name || `Customer ${customer.id}`,
        html`
<section><dl><dt>E-mail</dt><dd>${customer.email ?? '(none)'}</dd><dt>Phone</dt><dd>${customer.phone || '(none)'}</dd>
<dt>Customer since</dt><dd>${localTime(snapshot, customer.createdAt)}</dd></dl></section>
<h2>Bookings</h2>${bookingTable(snapshot, bookings)}`,
      ),
    );
  });
}
