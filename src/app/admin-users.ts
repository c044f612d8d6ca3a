// Admin users and roles (docs/admin.md "Users", docs/security.md "Roles and invitations").
// - administrator: everything; staff: bookings, the calendar, booking by hand and customers of their schedules.
// - A new user is invited: a one-time link whose random token is stored only as its SHA-256, valid
//   INVITATION_DAYS, usable once; the invitee opens it, sets a name and a password, and is signed in.
// - The last administrator can neither be demoted nor removed, checked under a lock on the administrators' rows.
// Every change is recorded in the audit trail in its own transaction.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import type { AdminRole } from '../db/schema.js';
import {
  adminEmailTaken,
  deleteAdminUser,
  deleteOldInvitations,
  findAdminUser,
  findInvitation,
  insertAdminUser,
  insertInvitation,
  listAdminUsers,
  listOpenInvitations,
  lockAdministrators,
  updateAdminRole,
  useInvitation,
  withdrawOpenInvitations,
  type AdminUserRow,
  type InvitationRow,
} from '../db/repos/admin-user.repository.js';
import { loadSchedules } from '../db/repos/schedule.repository.js';
import { isUniqueViolation } from '../db/unique-violation.js';
import { InvalidInput, NotFound } from '../core/errors.js';
import { isEmailAddress } from '../core/forms/form-fields.js';
import { controlCharacterProblem } from '../core/text.js';
import { hashPassword } from './passwords.js';
import { MIN_PASSWORD_LENGTH, openToken, sealToken, type TokenHolder } from './installation.js';
import { holdUnshownToken, takeUnshownTokenRow } from '../db/repos/admin-session.repository.js';
import { recordAudit, type Actor } from './audit.js';
import { createSession, type Session } from './admin-auth.js';

export type { AdminRole, AdminUserRow };
export const ROLES: readonly AdminRole[] = ['administrator', 'staff'];
export const INVITATION_DAYS = 7;
const INVITATION_MS = INVITATION_DAYS * 86_400_000;
/** 32 random bytes, base64url */
const INVITATION_TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** the path of an invitation link, below the installation's address */
export const invitationPath = (token: string) => `/admin/invitation/${token}`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

/** The schedule ids whose bookings and customers a user may see: null for all (an administrator). */
export function visibleSchedules(user: Pick<Session, 'role' | 'scheduleIds'>): readonly number[] | null {
  return user.role === 'administrator' ? null : user.scheduleIds;
}

/** The actor of the audit trail a signed-in user is. */
export const actorOf = (session: Pick<Session, 'adminId' | 'name' | 'email'>): Actor => ({
  kind: 'admin',
  adminId: session.adminId,
  label: session.name || session.email,
});

export const parseRole = (text: string | undefined): AdminRole | null => (text === 'administrator' || text === 'staff' ? text : null);

/** The role and schedules of an invitation or a change, checked: staff work on at least one existing schedule. */
async function checkedAccess(db: Db['kysely'], role: AdminRole, scheduleIds: readonly number[]): Promise<number[]> {
  if (role === 'administrator') return [];
  const known = new Set((await loadSchedules(db)).map((s) => s.id));
  const ids = [...new Set(scheduleIds)].sort((a, b) => a - b);
  const unknown = ids.find((id) => !known.has(id));
  if (unknown !== undefined) throw new InvalidInput(`there is no schedule ${unknown}`, 'schedules');
  if (ids.length === 0) throw new InvalidInput('choose at least one schedule a staff member works on', 'schedules');
  return ids;
}

export async function listUsers(db: Db) {
  return listAdminUsers(db.kysely);
}

export async function openInvitations(db: Db, now: number) {
  return listOpenInvitations(db.kysely, now);
}

export interface Invitation {
  /** the random token of the link (shown once, never stored) */
  token: string;
  path: string;
  email: string;
  expiresAt: number;
}

/**
 * Invites a user: an e-mail not in use, a role, the schedules of staff. Returns the link's token, which is
 * stored only as its hash. An open invitation for the same address is replaced (its link stops working): one
 * address, one link, so two links cannot both be accepted. `onCreated` runs in the transaction (the admin
 * area's one-time form token, and holding the link for the page that shows it once).
 */
export async function inviteUser(
  db: Db,
  input: { email: string; role: AdminRole; scheduleIds: readonly number[] },
  actor: Actor,
  now: number,
  onCreated?: (trx: Db['kysely'], invitation: Invitation) => Promise<void>,
): Promise<Invitation> {
  const email = input.email.trim().toLowerCase();
  if (!isEmailAddress(email)) throw new InvalidInput('enter an e-mail address like name@example.com', 'email');
  return db.write(async (trx) => {
    if (await adminEmailTaken(trx, email)) throw new InvalidInput(`${email} already has an account`, 'email');
    const scheduleIds = await checkedAccess(trx, input.role, input.scheduleIds);
    const token = randomBytes(32).toString('base64url');
    const expiresAt = now + INVITATION_MS;
    await deleteOldInvitations(trx, now - INVITATION_MS);
    if ((await withdrawOpenInvitations(trx, { email })).length > 0)
      await recordAudit(trx, actor, 'user.invitation_withdrawn', null, `${email}: replaced by a new invitation`, now);
    await insertInvitation(
      trx,
      { tokenHash: sha256(token), email, role: input.role, scheduleIds, invitedBy: actor.kind === 'admin' ? actor.adminId : null },
      now,
      expiresAt,
    );
    await recordAudit(trx, actor, 'user.invited', null, `${email} as ${input.role}`, now);
    const invitation = { token, path: invitationPath(token), email, expiresAt };
    await onCreated?.(trx, invitation);
    return invitation;
  });
}

/** The invitation a link's token names while it can be used; null for every other token alike. */
export async function openInvitation(db: Db, token: string, now: number): Promise<InvitationRow | null> {
  if (!INVITATION_TOKEN.test(token)) return null;
  const invitation = await findInvitation(db.kysely, sha256(token));
  return invitation && invitation.usedAt === null && invitation.expiresAt > now ? invitation : null;
}

/** Thrown when the link was used, expired or withdrawn between showing the page and submitting it. */
export class InvitationGone extends Error {}

/**
 * The invitee sets their name and password: the account is made with the invitation's role and schedules,
 * the link is used up (in the same transaction: a second submission finds it used), and a session is started;
 * returns the session's cookie value.
 */
export async function acceptInvitation(
  db: Db,
  token: string,
  input: { name: string; password: string; repeat: string },
  now: number,
): Promise<string> {
  const name = input.name.trim();
  if (name === '' || name.length > 200 || controlCharacterProblem(name, false) !== null)
    throw new InvalidInput('enter your name (at most 200 characters)', 'name');
  if (input.password.length < MIN_PASSWORD_LENGTH)
    throw new InvalidInput(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`, 'password');
  if (input.password !== input.repeat) throw new InvalidInput('the two passwords differ', 'repeat');
  const invitation = await openInvitation(db, token, now);
  if (!invitation) throw new InvitationGone();
  const passwordHash = await hashPassword(input.password);
  const taken = () => new InvalidInput(`${invitation.email} already has an account`, 'name');
  const adminId = await db
    .write(async (trx) => {
      if (!(await useInvitation(trx, invitation.id, now))) throw new InvitationGone();
      if (await adminEmailTaken(trx, invitation.email)) throw taken();
      const id = await insertAdminUser(
        trx,
        { email: invitation.email, name, passwordHash, role: invitation.role, scheduleIds: invitation.scheduleIds },
        now,
      );
      await recordAudit(
        trx,
        { kind: 'admin', adminId: id, label: name },
        'user.joined',
        null,
        `${invitation.email} as ${invitation.role}`,
        now,
      );
      return id;
    })
    .catch((error: unknown) => {
      // on PostgreSQL another link for the address (one issued before replacing was the rule) can be accepted
      // at the same moment: both checks pass before either commits, and the unique index refuses the second
      throw isUniqueViolation(error) ? taken() : error;
    });
  return createSession(db, adminId, now, name);
}

const LAST_ADMINISTRATOR = 'this is the last administrator: make another user administrator first';

/**
 * Changes a user's role and schedules; the last administrator stays one. Their sessions go on, with the new
 * rights; a demoted administrator's open invitations are withdrawn.
 */
export async function changeUser(
  db: Db,
  id: number,
  input: { role: AdminRole; scheduleIds: readonly number[] },
  actor: Actor,
  now: number,
): Promise<void> {
  await db.write(async (trx) => {
    const administrators = await lockAdministrators(trx);
    const user = await findAdminUser(trx, id);
    if (!user) throw new NotFound('User not found');
    if (input.role !== 'administrator' && administrators.length === 1 && administrators[0] === id)
      throw new InvalidInput(LAST_ADMINISTRATOR, 'role');
    const scheduleIds = await checkedAccess(trx, input.role, input.scheduleIds);
    await updateAdminRole(trx, id, input.role, scheduleIds);
    // only an administrator invites: a demoted one's open invitations go with the right
    if (user.role === 'administrator' && input.role !== 'administrator') await withdrawInvitationsIssuedBy(trx, user, actor, now);
    const where = input.role === 'staff' ? ` (schedules ${scheduleIds.join(', ')})` : '';
    await recordAudit(trx, actor, 'user.changed', null, `${user.email}: ${input.role}${where}`, now);
  });
}

/** Withdraws an open invitation: its link stops working. NotFound when it was used, or withdrawn, meanwhile. */
export async function withdrawInvitation(db: Db, id: number, actor: Actor, now: number): Promise<void> {
  await db.write(async (trx) => {
    const [email] = await withdrawOpenInvitations(trx, { id });
    if (email === undefined) throw new NotFound('Invitation not found');
    await recordAudit(trx, actor, 'user.invitation_withdrawn', null, email, now);
  });
}

/** The open invitations a user issued go when they lose the right to invite (demoted or removed). */
async function withdrawInvitationsIssuedBy(trx: Db['kysely'], user: AdminUserRow, actor: Actor, now: number): Promise<void> {
  const emails = await withdrawOpenInvitations(trx, { invitedBy: user.id });
  if (emails.length > 0)
    await recordAudit(trx, actor, 'user.invitation_withdrawn', null, `${emails.join(', ')}: invited by ${user.email}`, now);
}

/**
 * Removes a user: every session of theirs ends at once, and the invitations they issued and are still open
 * are withdrawn; what they did stays in the trail under their name.
 */
export async function removeUser(db: Db, id: number, actor: Actor, now: number): Promise<void> {
  await db.write(async (trx) => {
    const administrators = await lockAdministrators(trx);
    const user = await findAdminUser(trx, id);
    if (!user) throw new NotFound('User not found');
    if (administrators.length === 1 && administrators[0] === id) throw new InvalidInput(LAST_ADMINISTRATOR, 'remove');
    await withdrawInvitationsIssuedBy(trx, user, actor, now);
    await deleteAdminUser(trx, id);
    await recordAudit(trx, actor, 'user.removed', null, `${user.email} (${user.role})`, now);
  });
}

export async function findUser(db: Db, id: number): Promise<AdminUserRow | null> {
  return findAdminUser(db.kysely, id);
}

/** Whether the user may be removed or demoted (the Users page's buttons say why not). */
export async function isLastAdministrator(db: Db, user: AdminUserRow): Promise<boolean> {
  if (user.role !== 'administrator') return false;
  return (await listAdminUsers(db.kysely)).filter((u) => u.role === 'administrator').length === 1;
}

/** Schedule ids as the CLI and the forms give them: "1,2" (empty: none). */
export function parseScheduleIds(text: string): number[] {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const ids = parts.map((p) => (/^[1-9][0-9]{0,9}$/.test(p) ? Number(p) : NaN));
  if (ids.some((n) => Number.isNaN(n)))
    throw new InvalidInput(`schedules must be ids separated by commas, got ${JSON.stringify(text)}`, 'schedules');
  return ids;
}

/** Holds a new invitation's token on the inviting session's row (sealed with its session id) for the page that shows it once. */
export const holdInvitationToShow =
  (session: TokenHolder) =>
  async (trx: Db['kysely'], invitation: Invitation): Promise<void> =>
    holdUnshownToken(trx, session.rowKey, sealToken(session.sessionId, invitation.token), 'unshown_invitation');

/** The invitation token held for this session, once: null when it was already shown. */
export async function takeInvitationToShow(db: Db, session: TokenHolder): Promise<string | null> {
  const held = await db.write((trx) => takeUnshownTokenRow(trx, session.rowKey, 'unshown_invitation'));
  return held === null ? null : openToken(session.sessionId, held);
}
