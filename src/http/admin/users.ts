// Users (administrators only, roles.ts): the list, inviting by a one-time link shown once, changing a user's
// role and schedules, removing a user; the invitation page a new user opens; the Activity page (the audit
// trail). The rules are in app/admin-users.ts; this file turns forms into its inputs.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidInput, NotFound } from '../../core/errors.js';
import {
  INVITATION_DAYS,
  ROLES,
  acceptInvitation,
  changeUser,
  findUser,
  holdInvitationToShow,
  invitationPath,
  inviteUser,
  isLastAdministrator,
  listUsers,
  openInvitation,
  openInvitations,
  parseRole,
  removeUser,
  takeInvitationToShow,
  withdrawInvitation,
  InvitationGone,
  type AdminRole,
  type AdminUserRow,
} from '../../app/admin-users.js';
import { describeEvent, latestActivity, ACTIVITY_LIMIT } from '../../app/audit.js';
import { sessionKey } from '../../app/admin-auth.js';
import { checkFormToken, claimFormToken } from '../../app/form-tokens.js';
import { listSchedules } from '../../app/admin-schedules.js';
import { text } from './form-input.js';
import { html, type Markup } from './html.js';
import { checkbox, confirmPage, csrfField, humanReason, input, onceField, page, select, type Errors } from './layout.js';
import { actor, body, formTokenOfPage, idParam, localTime, query, sendPage, state, type AdminDeps } from './context.js';
import { setSessionCookie } from './cookies.js';

const ROLE_LABELS: Record<AdminRole, string> = {
  administrator: 'Administrator (everything)',
  staff: 'Staff (bookings and customers of their schedules)',
};

const userName = (u: Pick<AdminUserRow, 'name' | 'email'>) => u.name || u.email;

/** The schedule checkboxes of the invite and change forms (`schedule.ID`), and the ids ticked. */
async function scheduleBoxes(deps: AdminDeps, ticked: readonly number[], errors: Errors): Promise<Markup> {
  const schedules = (await listSchedules(deps.db)).filter((s) => !s.retiredAt);
  return html`<fieldset class="card${errors.schedules ? ' invalid' : ''}" id="schedules"><legend>Schedules (staff only)</legend>
${errors.schedules ? html`<p class="error" id="schedules-error">${errors.schedules}</p>` : ''}
${schedules.map((s) => checkbox(s.name, `schedule.${s.id}`, ticked.includes(s.id)))}
<p class="muted">Staff see and book only these schedules' bookings and customers. Administrators see everything.</p></fieldset>`;
}

const tickedSchedules = (values: Record<string, string>) =>
  Object.keys(values)
    .filter((k) => k.startsWith('schedule.') && values[k] === 'on')
    .map((k) => idParam(k.slice('schedule.'.length)))
    .filter((id): id is number => id !== null);

/** The address an invitation link starts with: PUBLIC_URL, else the address this page was reached at. */
function baseUrl(request: FastifyRequest, publicUrl: string | null): string {
  return (publicUrl ?? `${request.protocol}://${request.host}`).replace(/\/+$/, '');
}

const FLASHES: Record<string, string> = {
  changed: 'User saved.',
  removed: 'User removed. Their sessions ended, and their open invitations were withdrawn.',
  withdrawn: 'Invitation withdrawn: its link no longer works.',
};

export function userRoutes(app: FastifyInstance, deps: AdminDeps, publicUrl: string | null): void {
  const { db, clock } = deps;

  app.get('/users', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const [users, invitations, schedules] = await Promise.all([listUsers(db), openInvitations(db, clock()), listSchedules(db)]);
    const scheduleName = (id: number) => schedules.find((s) => s.id === id)?.name ?? `schedule ${id}`;
    const saved = query(request).saved;
    return sendPage(
      reply,
      page(
        ctx,
        'Users',
        html`<p><a class="button" href="/admin/users/invite">Invite a user</a> <a class="button secondary" href="/admin/activity">Activity</a></p>
<div class="table-wrap"><table id="users"><thead><tr><th>E-mail</th><th>Name</th><th>Role</th><th>Schedules</th><th>Last sign-in</th><th></th></tr></thead><tbody>
${users.map(
  (u) => html`<tr><td>${u.email}</td><td>${u.name}</td><td>${u.role}</td>
<td>${u.role === 'administrator' ? html`<span class="muted">all</span>` : u.scheduleIds.map(scheduleName).join(', ')}</td>
<td>${u.lastSignInAt === null ? html`<span class="muted">never</span>` : localTime(snapshot, u.lastSignInAt)}</td>
<td><a href="/admin/users/${u.id}">Change</a> · <a href="/admin/activity?user=${u.id}">Activity</a></td></tr>`,
)}
</tbody></table></div>
${
  invitations.length
    ? html`<h2>Open invitations</h2><ul id="invitations">${invitations.map(
        (i) => html`<li>${i.email} (${i.role}), link valid until ${localTime(snapshot, i.expiresAt)}
<form method="post" action="/admin/users/invitations/${i.id}/withdraw" class="inline">${csrfField(ctx)}<button class="secondary">Withdraw</button></form></li>`,
      )}</ul>`
    : ''
}`,
        { flash: saved !== undefined && Object.hasOwn(FLASHES, saved) ? FLASHES[saved] : undefined },
      ),
    );
  });

  const invitePage = async (request: FastifyRequest, values: Record<string, string>, errors: Errors, once: string) => {
    const { page: ctx } = state(request);
    return page(
      ctx,
      'Invite a user',
      html`<form method="post" action="/admin/users/invite" class="card" novalidate>${csrfField(ctx)}${onceField(once)}
${input('E-mail', 'email', values.email ?? '', errors, { type: 'email', required: true })}
${select(
  'Role',
  'role',
  values.role ?? 'staff',
  ROLES.map((r): [string, string] => [r, ROLE_LABELS[r]]),
  errors,
)}
${await scheduleBoxes(deps, tickedSchedules(values), errors)}
<p class="muted">The next page shows a link, once: give it to the new user. It works once, for ${INVITATION_DAYS} days; they choose their name and password there.</p>
<button>Invite</button> <a class="button secondary" href="/admin/users">Back, invite nobody</a></form>`,
      { errors, labels: { email: 'E-mail', role: 'Role', schedules: 'Schedules' } },
    );
  };

  app.get('/users/invite', async (request, reply) => {
    const once = formTokenOfPage(request, reply);
    if (once === null) return reply;
    return sendPage(reply, await invitePage(request, { role: 'staff' }, {}, once));
  });

  app.post('/users/invite', async (request, reply) => {
    const raw = body(request);
    const values: Record<string, string> = Object.fromEntries(Object.keys(raw).map((k) => [k, text(raw, k)]));
    const once = values._once ?? '';
    const role = parseRole(values.role);
    if (!role) return sendPage(reply, await invitePage(request, values, { role: 'Choose a role.' }, once), 400);
    await checkFormToken(db, once);
    const session = state(request).session!;
    const now = clock();
    const holder = { rowKey: sessionKey(session), sessionId: session.sessionId };
    const claim = claimFormToken(once, now, () => '/admin/users');
    try {
      await inviteUser(
        db,
        { email: values.email ?? '', role, scheduleIds: tickedSchedules(values) },
        actor(request),
        now,
        async (trx, invitation) => {
          await holdInvitationToShow(holder)(trx, invitation);
          await claim(trx, invitation);
        },
      );
    } catch (error) {
      if (error instanceof InvalidInput)
        return sendPage(reply, await invitePage(request, values, { [error.path ?? 'email']: humanReason(error.reason) }, once), 400);
      throw error;
    }
    return reply.redirect('/admin/users/invited', 303);
  });

  // POST/redirect/GET: the link is held on the session row until this page shows it, once
  app.get('/users/invited', async (request, reply) => {
    const { page: ctx, session } = state(request);
    const token = await takeInvitationToShow(db, { rowKey: sessionKey(session!), sessionId: session!.sessionId });
    const link = token ? `${baseUrl(request, publicUrl)}${invitationPath(token)}` : null;
    return sendPage(
      reply,
      page(
        ctx,
        'Invitation link',
        link
          ? html`<div class="alert" role="alert"><p><strong>Give this link to the new user now: it is shown only this once.</strong>
It works once, for ${INVITATION_DAYS} days. Whoever opens it can create the account: send it only to them.</p>
<code class="token" id="invitation-link">${link}</code>
<p><button type="button" class="secondary" data-copy="invitation-link" hidden>Copy link</button> <span id="copy-status" role="status"></span></p></div>
<p><a href="/admin/users">Back to the users</a></p>`
          : html`<p class="alert" role="status" id="invitation-already-shown">This invitation link was already shown: for safety it is shown only once. If it was lost, invite the user again.</p>
<p><a href="/admin/users">Back to the users</a></p>`,
      ),
    );
  });

  const userOf = async (request: FastifyRequest): Promise<AdminUserRow> => {
    const id = idParam((request.params as { id?: string }).id);
    const user = id === null ? null : await findUser(db, id);
    if (!user) throw new NotFound('User not found');
    return user;
  };

  const changePage = async (request: FastifyRequest, user: AdminUserRow, values: Record<string, string>, errors: Errors) => {
    const { page: ctx } = state(request);
    const last = await isLastAdministrator(db, user);
    return page(
      ctx,
      `User ${userName(user)}`,
      html`<p>${user.email}${user.name ? ` · ${user.name}` : ''}</p>
<form method="post" action="/admin/users/${user.id}" class="card" novalidate>${csrfField(ctx)}
${select(
  'Role',
  'role',
  values.role ?? user.role,
  ROLES.map((r): [string, string] => [r, ROLE_LABELS[r]]),
  errors,
)}
${last ? html`<p class="muted" id="last-administrator">The last administrator: make another user administrator before changing this one's role or removing them.</p>` : ''}
${await scheduleBoxes(deps, tickedSchedules(values), errors)}
<button>Save user</button> <a class="button secondary" href="/admin/users">Back, change nothing</a></form>
${last ? '' : html`<p><a class="button secondary" href="/admin/users/${user.id}/remove">Remove this user…</a></p>`}`,
      { errors, labels: { role: 'Role', schedules: 'Schedules' } },
    );
  };

  app.get('/users/:id', async (request, reply) => {
    const user = await userOf(request);
    const values = { role: user.role, ...Object.fromEntries(user.scheduleIds.map((id) => [`schedule.${id}`, 'on'])) };
    return sendPage(reply, await changePage(request, user, values, {}));
  });

  app.post('/users/:id', async (request, reply) => {
    const user = await userOf(request);
    const raw = body(request);
    const values: Record<string, string> = Object.fromEntries(Object.keys(raw).map((k) => [k, text(raw, k)]));
    const role = parseRole(values.role);
    if (!role) return sendPage(reply, await changePage(request, user, values, { role: 'Choose a role.' }), 400);
    try {
      await changeUser(db, user.id, { role, scheduleIds: tickedSchedules(values) }, actor(request), clock());
    } catch (error) {
      if (error instanceof InvalidInput)
        return sendPage(reply, await changePage(request, user, values, { [error.path ?? 'role']: humanReason(error.reason) }), 400);
      throw error;
    }
    return reply.redirect('/admin/users?saved=changed', 303);
  });

  app.get('/users/:id/remove', async (request, reply) => {
    const { page: ctx } = state(request);
    const user = await userOf(request);
    if (await isLastAdministrator(db, user)) return reply.redirect(`/admin/users/${user.id}`, 303);
    return sendPage(
      reply,
      confirmPage(
        ctx,
        `Remove ${userName(user)}?`,
        html`<p><strong>${user.email}</strong> (${user.role}) will be removed:</p>
<ul><li>they are signed out everywhere at once and cannot sign in again;</li>
<li>what they did stays in the bookings' history and the activity, under their name.</li></ul>`,
        `/admin/users/${user.id}/remove`,
        'Confirm removal',
        `/admin/users/${user.id}`,
      ),
    );
  });

  app.post('/users/:id/remove', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('User not found');
    // removed already (Back, a double click): the outcome asked for
    if (await findUser(db, id)) await removeUser(db, id, actor(request), clock());
    return reply.redirect('/admin/users?saved=removed', 303);
  });

  // no confirmation page: a withdrawal loses no history (it is in the activity) and inviting again undoes it
  app.post('/users/invitations/:id/withdraw', async (request, reply) => {
    const id = idParam((request.params as { id?: string }).id);
    if (id === null) throw new NotFound('Invitation not found');
    try {
      await withdrawInvitation(db, id, actor(request), clock());
    } catch (error) {
      // withdrawn or used already (a double click, another tab): the list shows which
      if (!(error instanceof NotFound)) throw error;
    }
    return reply.redirect('/admin/users?saved=withdrawn', 303);
  });

  app.get('/activity', async (request, reply) => {
    const { page: ctx, snapshot } = state(request);
    const userId = idParam(query(request).user);
    const [entries, users] = await Promise.all([latestActivity(db, userId), listUsers(db)]);
    return sendPage(
      reply,
      page(
        ctx,
        'Activity',
        html`<form method="get" action="/admin/activity" class="card row">
${select('User', 'user', userId === null ? '' : String(userId), [['', 'Everyone'], ...users.map((u): [string, string] => [String(u.id), userName(u)])], {})}
<button>Show</button></form>
<p class="muted">The latest ${ACTIVITY_LIMIT} changes: bookings made, moved, cancelled or edited (in the admin area, through the API or by customers), users invited, changed or removed, and sign-ins.</p>
${
  entries.length === 0
    ? html`<p class="muted">Nothing recorded yet.</p>`
    : html`<div class="table-wrap"><table id="activity"><thead><tr><th>When</th><th>What</th><th>Details</th></tr></thead><tbody>
${entries.map(
  (e) => html`<tr><td>${localTime(snapshot, e.at)}</td><td>${describeEvent(e)}</td>
<td>${e.detailsId ? html`<a href="/admin/bookings/${e.detailsId}">${e.summary || 'booking'}</a>` : e.summary}</td></tr>`,
)}
</tbody></table></div>`
}`,
      ),
    );
  });

  // The invitation link: public (the invitee has no account yet); the token itself is the credential.
  const invitationPage = (request: FastifyRequest, token: string, email: string, values: Record<string, string>, errors: Errors) => {
    const { page: ctx } = state(request);
    return page(
      ctx,
      'Create your account',
      html`<p>You were invited to the administration of ${ctx.installationName} as <strong>${email}</strong>. Choose your name and a password.</p>
<form method="post" action="${invitationPath(token)}" class="card" novalidate>${csrfField(ctx)}
${input('Your name', 'name', values.name ?? '', errors, { required: true, autocomplete: 'name' })}
${input('Password', 'password', '', errors, { type: 'password', required: true, autocomplete: 'new-password' })}
${input('Repeat the password', 'repeat', '', errors, { type: 'password', required: true, autocomplete: 'new-password' })}
<button>Create account</button></form>`,
      { errors, labels: { name: 'Your name', password: 'Password', repeat: 'Repeat the password' } },
    );
  };

  const invitationGone = (request: FastifyRequest) =>
    page(
      state(request).page,
      'Invitation not valid',
      html`<p class="alert" id="invitation-gone">This invitation link is not valid: it was used already, it expired, or it is incomplete. Ask an administrator for a new one.</p>`,
    );

  app.get('/invitation/:token', async (request, reply) => {
    const token = (request.params as { token: string }).token;
    const invitation = await openInvitation(db, token, clock());
    if (!invitation) return sendPage(reply, invitationGone(request), 404);
    return sendPage(reply, invitationPage(request, token, invitation.email, {}, {}));
  });

  app.post('/invitation/:token', async (request, reply) => {
    const token = (request.params as { token: string }).token;
    const raw = body(request);
    const values = { name: text(raw, 'name'), password: text(raw, 'password'), repeat: text(raw, 'repeat') };
    const now = clock();
    try {
      const cookie = await acceptInvitation(db, token, values, now);
      setSessionCookie(request, reply, cookie);
      return reply.redirect('/admin/bookings', 303);
    } catch (error) {
      if (error instanceof InvitationGone) return sendPage(reply, invitationGone(request), 404);
      if (error instanceof InvalidInput) {
        const invitation = await openInvitation(db, token, now);
        if (!invitation) return sendPage(reply, invitationGone(request), 404);
        return sendPage(
          reply,
          invitationPage(request, token, invitation.email, values, { [error.path ?? 'name']: humanReason(error.reason) }),
          400,
        );
      }
      throw error;
    }
  });
}
