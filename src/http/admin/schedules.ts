// Schedules: list, create, edit (settings, weekly hours, exceptions), delete; reasons; the booking form.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidInput, NotFound } from '../../core/errors.js';
import {
  addReason,
  createSchedule,
  editReason,
  getSchedule,
  listSchedules,
  restoreReason,
  restoreSchedule,
  retireReason,
  retireSchedule,
  saveForm,
  updateSchedule,
  type ScheduleEdit,
} from '../../app/admin-schedules.js';
import type { Db } from '../../db/connect.js';
import type { Snapshot } from '../../app/snapshot.js';
import { listBookings, type BookingRow } from '../../app/admin-bookings.js';
import { withinOpeningHours } from '../../core/availability/outside-hours.js';
import type { ScheduleRules, StoredReason, StoredSchedule } from '../../core/schedules/schedule.js';
import { parseDate } from '../../core/time/calendar.js';
import { SETTING_FIELDS } from '../../core/schedules/schedule-definition.js';
import { FORM_TYPES, INPUT_TYPES } from '../../core/forms/form-fields.js';
import { WEEKDAYS } from '../../core/time/calendar.js';
import { html, type Markup } from './html.js';
import {
  confirmPage,
  csrfField,
  fieldError,
  humanReason,
  input,
  onceField,
  page,
  textarea,
  type Errors,
  type PageContext,
} from './layout.js';
import { body, formTokenOfPage, idParam, localTime, query, sendPage, state, type AdminDeps } from './context.js';
import { checkFormToken, claimFormToken, newFormToken } from '../../app/form-tokens.js';
import { text, type FormInput } from './form-input.js';
import {
  blankRow,
  exceptionsToText,
  formFromRows,
  formRowsFromInput,
  formRowsOf,
  FormProblems,
  hourField,
  intervalIndices,
  intervalsToText,
  isBlankRow,
  scheduleValuesFromInput,
  valuesAfterHoursAction,
  reasonFromForm,
  reasonValues,
  scheduleFromForm,
  scheduleValues,
  type FormRowInput,
  type ReasonValues,
} from './schedule-form.js';

const SETTING_LABELS: Record<string, [string, string]> = {
  slot_interval_minutes: [
    'Start times every (minutes)',
    'The grid of possible start times, counted from the start of each opening interval.',
  ],
  min_notice_minutes: ['Earliest booking (minutes ahead)', 'Minimum notice: no start earlier than now plus this.'],
  horizon_days: ['Latest booking (days ahead)', 'Horizon: no start later than the end of today plus this many days.'],
  capacity: ['Bookings at the same time', 'Capacity: how many bookings may overlap.'],
  buffer_before_minutes: ['Free before each booking (minutes)', 'Buffer kept free before each booking.'],
  buffer_after_minutes: ['Free after each booking (minutes)', 'Buffer kept free after each booking.'],
  cancel_cutoff_minutes: [
    'Customers can cancel or move online until (minutes before)',
    'Through the link in their e-mail; closer to the start the page asks them to call. 0: until the start; 1440: a day before.',
  ],
};
/** The editor's column headings, repeated beside each control where the rows stack (a phone). */
const COLUMN_HEADINGS: Record<string, string> = {
  position: 'Position',
  name: 'Name',
  label: 'Label',
  form_type: 'Form type',
  input_type: 'Input type',
  required: 'Required',
  options: 'Options (select, one per line)',
  remove: 'Remove',
};
const FORM_COLUMNS: Record<string, string> = {
  position: 'position',
  name: 'name',
  label: 'label',
  form_type: 'form type',
  input_type: 'input type',
  options: 'options',
  required: 'required',
};

/** What the error summary calls a field of the schedule page. */
function fieldLabel(key: string): string {
  if (key === 'name') return 'Name';
  if (key === 'exceptions') return 'Date exceptions';
  if (key === 'reminder_minutes_before') return 'Reminders before the appointment';
  if (SETTING_LABELS[key]) return SETTING_LABELS[key][0];
  if (key.startsWith('weekly_hours.')) return `Weekly hours, ${DAY_NAMES[key.slice('weekly_hours.'.length)] ?? ''}`;
  const row = /^f(\d+)_(.+)$/.exec(key);
  if (row) return `Booking form, row ${Number(row[1]) + 1}, ${FORM_COLUMNS[row[2]!] ?? row[2]}`;
  const reason = /^(new_reason_|reason\d+_)(.+)$/.exec(key);
  if (reason) return `${reason[1] === NEW_REASON ? 'New reason' : 'Reason'}, ${reason[2]!.replace('_minutes', ' (minutes)')}`;
  return key;
}

const labelsOf = (errors: Errors) => Object.fromEntries(Object.keys(errors).map((k) => [k, fieldLabel(k)]));
const NEW_REASON = 'new_reason_';
const DAY_NAMES: Record<string, string> = {
  mon: 'Monday',
  tue: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};
/** A save's confirmation and where on the page it goes: 'top', or the id of the part that was saved. */
interface PlacedFlash {
  text: string;
  at: string;
}
const FLASHES: Record<string, PlacedFlash> = {
  created: { text: 'Schedule created. Add reasons below.', at: 'top' },
  saved: { text: 'Schedule saved.', at: 'schedule' },
  hours: { text: 'Schedule saved, with the new opening hours.', at: 'hours' },
  reason: { text: 'Reason saved.', at: 'reason' },
  reason_retired: { text: 'Reason retired: it is no longer offered; its bookings are kept.', at: 'reasons' },
  reason_restored: { text: 'Reason restored: it is offered again.', at: 'reasons' },
  form: { text: 'Booking form saved.', at: 'form' },
  retired: { text: 'Schedule retired: it is no longer offered; its bookings are kept.', at: 'top' },
  restored: { text: 'Schedule restored: it is offered again.', at: 'top' },
};

/** The confirmation the redirect's `?saved=` asks for; a reason's goes beside that reason (`&reason=ID`). */
function flashOf(request: FastifyRequest): PlacedFlash | undefined {
  const q = query(request);
  const flash = q.saved ? FLASHES[q.saved] : undefined;
  if (flash?.at !== 'reason') return flash;
  const id = idParam(q.reason);
  return { text: flash.text, at: id === null ? 'reasons' : `reason${id}` };
}

/**
 * The first submit button of a form is the one Enter presses: an invisible copy of the form's main button
 * comes first, so Enter in a field saves instead of adding or removing a row.
 */
const defaultSubmit = (label: string) =>
  html`<button class="default-submit" name="_action" value="save" tabindex="-1" aria-hidden="true">${label}</button>`;

/** A save's confirmation, beside the part of the page that was saved (the redirect's anchor leads there). */
const flashAt = (flash: PlacedFlash | undefined, at: string): Markup =>
  flash?.at === at ? html`<p class="flash" role="status">${flash.text}</p>` : html``;

/** One weekday's opening intervals as pairs of time inputs, with one empty pair to add one, and the text alternative. */
function weekdayHours(action: string, day: string, values: Record<string, string>, errors: Errors): Markup {
  // without JavaScript the form comes back at this day (the fragment of the address posted to)
  const back = `${action}#hours-${day}`;
  const indices = intervalIndices(values, day);
  const filled = (i: number) => (values[hourField(day, i, 'from')] ?? '') !== '' || (values[hourField(day, i, 'to')] ?? '') !== '';
  const last = indices.at(-1);
  if (last === undefined || filled(last)) indices.push((last ?? -1) + 1);
  const time = (i: number, end: 'from' | 'to', label: string) =>
    html`<label>${label} <input type="time" id="${hourField(day, i, end)}" name="${hourField(day, i, end)}" value="${values[hourField(day, i, end)] ?? ''}"></label>`;
  return html`<fieldset class="day-hours${errors[`weekly_hours.${day}`] ? ' invalid' : ''}" id="hours-${day}"><legend>${DAY_NAMES[day]}</legend>
<div class="intervals" id="intervals-${day}">${indices.map(
    (i) => html`<div class="interval">${time(i, 'from', 'From')}${time(i, 'to', 'To')}
<button class="secondary small" name="_action" value="remove:${day}:${i}" formaction="${back}" formnovalidate data-remove-interval>Remove</button></div>`,
  )}</div>
<button class="secondary small" name="_action" value="add:${day}" formaction="${back}" formnovalidate data-add-interval="${day}">Add interval</button>
${input(`${DAY_NAMES[day]} as text`, `weekly_hours.${day}`, values[`weekly_hours.${day}`] ?? '', errors, { placeholder: 'e.g. 8-12, 13-17' })}
</fieldset>`;
}

function scheduleForm(
  ctx: PageContext,
  action: string,
  values: Record<string, string>,
  errors: Errors,
  submit: string,
  once?: string,
  flash?: PlacedFlash,
): Markup {
  return html`<form method="post" action="${action}" id="schedule">${defaultSubmit(submit)}${csrfField(ctx)}${once ? onceField(once) : ''}
${flashAt(flash, 'schedule')}
${errors.form ? html`<p class="danger" role="alert">${errors.form}</p>` : ''}
${input('Name', 'name', values.name ?? '', errors, { required: true, hint: 'A person, a room: what customers book.' })}
<h2>Settings</h2><div class="grid">
${SETTING_FIELDS.map(({ key, min, max }) => input(SETTING_LABELS[key]![0], key, values[key] ?? '', errors, { type: 'number', min, max, hint: SETTING_LABELS[key]![1] }))}
</div>
<h2 id="hours">Weekly hours</h2>
${flashAt(flash, 'hours')}
<p class="muted">Per weekday, the opening intervals, from and to. No interval: closed. An end of <code>00:00</code> is midnight at the end of the day. Empty pairs are ignored. Or type a day's hours as text, e.g. <code>9-12, 13:30-17</code>: that replaces its times.</p>
<div class="hours-grid">${WEEKDAYS.map((d) => weekdayHours(action, d, values, errors))}</div>
<h2>Exceptions</h2>
${textarea('Date exceptions', 'exceptions', values.exceptions ?? '', errors, { rows: 4, hint: 'One date per line: "2026-12-24 closed" or "2026-12-27 10:00-12:00, 14:00-16:00". They replace that day\'s weekly hours.' })}
<h2>Reminders</h2>
${input('Reminders before the appointment', 'reminder_minutes_before', values.reminder_minutes_before ?? '', errors, { placeholder: 'none', hint: 'E-mails to the customer before the appointment, separated by commas, e.g. "24 hours, 2 hours" or "1 day, 30 minutes". Empty: none. A change applies to bookings made afterwards.' })}
<button>${submit}</button></form>`;
}

function reasonRow(
  ctx: PageContext,
  scheduleId: number,
  r: StoredReason,
  values: ReasonValues | null,
  errors: Errors,
  flash: PlacedFlash | undefined,
): Markup {
  const v: ReasonValues = values ?? { name: r.name, description: r.description, duration_minutes: String(r.durationMinutes) };
  // an existing reason's inputs carry its id so that element ids stay unique on the page
  const p = `reason${r.id}_`;
  const e: Errors = Object.fromEntries(Object.entries(errors).map(([k, m]) => [p + k, m]));
  return html`<div class="card" id="reason${r.id}">${flashAt(flash, `reason${r.id}`)}<form method="post" action="/admin/schedules/${scheduleId}/reasons/${r.id}" class="row">${csrfField(ctx)}
${input('Name', p + 'name', v.name ?? '', e, { required: true })}
${input('Duration (minutes)', p + 'duration_minutes', v.duration_minutes ?? '', e, { type: 'number', min: 1, required: true })}
${input('Description', p + 'description', v.description ?? '', e)}
<button>Save</button></form>
<a class="button secondary" href="/admin/schedules/${scheduleId}/reasons/${r.id}/retire">Retire reason</a></div>`;
}

function retiredReasonRow(ctx: PageContext, snapshotZoneTime: (t: number) => string, scheduleId: number, r: StoredReason): Markup {
  return html`<div class="card retired row"><p><strong>${r.name}</strong> (${r.durationMinutes} min) · retired ${snapshotZoneTime(r.retiredAt ?? 0)}: not offered, its bookings kept.</p>
<form method="post" action="/admin/schedules/${scheduleId}/reasons/${r.id}/restore" class="inline">${csrfField(ctx)}<button class="secondary">Restore reason</button></form></div>`;
}

/** The rows shown again after a problem: those typed into, numbered afresh (their problems with them), and one empty row. */
function rowsShownAgain(rows: readonly FormRowInput[], errors: Errors): { rows: FormRowInput[]; errors: Errors } {
  const kept = rows.filter((r) => !isBlankRow(r));
  const renamed: Record<string, string> = {};
  kept.forEach((r, i) => {
    for (const [key, message] of Object.entries(errors))
      if (key.startsWith(`f${r.row}_`)) renamed[`f${i}_${key.slice(`f${r.row}_`.length)}`] = message;
  });
  return { rows: [...kept.map((r, i) => ({ ...r, row: i })), blankRow(kept.length)], errors: renamed };
}

/** The booking form editor: the rows given (the last ones empty, to add fields), saved all at once. */
function formEditor(ctx: PageContext, schedule: StoredSchedule, all: readonly FormRowInput[], errors: Errors, flash?: PlacedFlash): Markup {
  return html`<form method="post" action="/admin/schedules/${schedule.id}/form" id="form-editor">${defaultSubmit('Save booking form')}${csrfField(ctx)}
${flashAt(flash, 'form')}
<input type="hidden" name="rows" value="${all.length}">
<p class="muted">Fields appear in the order of their position. Fill the empty rows to add fields ("Add field" for one more); tick "Remove" to drop one; then save them all at once. A field named <code>password</code> is never shown through the API.</p>
<div class="table-wrap"><table class="form-rows"><thead><tr><th>Position</th><th>Name</th><th>Label</th><th>Form type</th><th>Input type</th><th>Required</th><th>Options (select, one per line)</th><th>Remove</th></tr></thead><tbody>
${all.map((r) => {
  const f = (k: string) => `f${r.row}_${k}`;
  const cell = (k: string, control: Markup) =>
    html`<td data-label="${COLUMN_HEADINGS[k]}"${errors[f(k)] ? html` class="invalid"` : ''}>${control}${fieldError(errors, f(k))}</td>`;
  const isNew = isBlankRow(r);
  return html`<tr>
${cell('position', html`<input id="${f('position')}" name="${f('position')}" type="number" value="${r.position}" aria-label="Position" class="narrow">`)}
${cell('name', html`<input id="${f('name')}" name="${f('name')}" value="${r.name}" aria-label="${isNew ? 'New field name' : 'Field name'}"${isNew ? html` placeholder="new_field"` : ''}>`)}
${cell('label', html`<input id="${f('label')}" name="${f('label')}" value="${r.label}" aria-label="Label">`)}
${cell('form_type', html`<select id="${f('form_type')}" name="${f('form_type')}" aria-label="Form type">${FORM_TYPES.map((t) => html`<option${t === r.formType ? html` selected` : ''}>${t}</option>`)}</select>`)}
${cell('input_type', html`<select id="${f('input_type')}" name="${f('input_type')}" aria-label="Input type">${INPUT_TYPES.map((t) => html`<option${t === r.inputType ? html` selected` : ''}>${t}</option>`)}</select>`)}
${cell('required', html`<input type="checkbox" id="${f('required')}" name="${f('required')}" aria-label="Required"${r.required ? html` checked` : ''}>`)}
${cell('options', html`<textarea id="${f('options')}" name="${f('options')}" rows="2" aria-label="Options">${r.options}</textarea>`)}
${cell('remove', isNew ? html`` : html`<input type="checkbox" id="${f('remove')}" name="${f('remove')}" aria-label="Remove"${r.remove ? html` checked` : ''}>`)}
</tr>`;
})}
</tbody></table></div><p class="row"><button class="secondary" name="_action" value="add_row" formaction="/admin/schedules/${schedule.id}/form#form-editor" formnovalidate data-add-row>Add field</button>
<button name="_action" value="save">Save booking form</button></p></form>`;
}

async function scheduleOr404(db: Db, request: FastifyRequest): Promise<StoredSchedule> {
  const id = idParam((request.params as { id?: string }).id);
  if (id === null) throw new NotFound('Schedule not found');
  return getSchedule(db, id);
}

function reasonIdOr404(request: FastifyRequest): number {
  const reasonId = idParam((request.params as { reason?: string }).reason);
  if (reasonId === null) throw new NotFound('Reason not found');
  return reasonId;
}

/** The form fields the problems of schedule-form.ts are about, each with its reason in human words. */
function errorsOf(error: unknown, fallback: string): Errors {
  if (error instanceof FormProblems) return Object.fromEntries(Object.entries(error.problems).map(([k, m]) => [k, humanReason(m)]));
  if (!(error instanceof InvalidInput)) throw error;
  return { [error.path || fallback]: humanReason(error.reason) };
}

interface EditPageParts {
  values?: Record<string, string>;
  errors?: Errors;
  reasonErrors?: { id: number | 'new'; values: ReasonValues; errors: Errors };
  formRows?: FormRowInput[];
  formErrors?: Errors;
  flash?: PlacedFlash | undefined;
  /** upcoming bookings outside the opening hours, pointed out at the top */
  outside?: readonly BookingRow[];
  /** the add-reason form's one-time token (of the page's address, or kept when it comes back with errors) */
  reasonOnce: string;
}

function editPage(request: FastifyRequest, schedule: StoredSchedule, parts: EditPageParts): string {
  const { page: ctx, snapshot } = state(request);
  const inService = schedule.reasons.filter((r) => !r.retiredAt);
  const retired = schedule.reasons.filter((r) => r.retiredAt);
  const re = parts.reasonErrors;
  // the new reason's inputs carry a prefix too: "name" is already the schedule's name on this page
  const newValues: ReasonValues = re?.id === 'new' ? re.values : { name: '', description: '', duration_minutes: '30' };
  const newErrors: Errors = re?.id === 'new' ? Object.fromEntries(Object.entries(re.errors).map(([k, m]) => [NEW_REASON + k, m])) : {};
  const reasonRowErrors: Errors =
    re && re.id !== 'new' ? Object.fromEntries(Object.entries(re.errors).map(([k, m]) => [`reason${re.id}_${k}`, m])) : {};
  const allErrors: Errors = { ...(parts.errors ?? {}), ...newErrors, ...reasonRowErrors, ...(parts.formErrors ?? {}) };
  return page(
    ctx,
    `Schedule: ${schedule.name}`,
    html`
${
  schedule.retiredAt
    ? html`<div class="alert retired-banner" role="status"><p>This schedule was retired on ${localTime(snapshot, schedule.retiredAt)}: it is not offered through the API nor for new bookings. Its bookings are kept.</p>
<form method="post" action="/admin/schedules/${schedule.id}/restore">${csrfField(ctx)}<button>Restore schedule</button></form></div>`
    : ''
}
${
  parts.outside?.length
    ? html`<div class="alert" role="status" id="outside-hours"><p><strong>${parts.outside.length} upcoming booking${parts.outside.length === 1 ? ' is' : 's are'} outside the opening hours</strong> (the hours or exceptions changed after ${parts.outside.length === 1 ? 'it was' : 'they were'} booked). ${parts.outside.length === 1 ? 'It stays' : 'They stay'} booked: move or cancel ${parts.outside.length === 1 ? 'it' : 'them'}, or change the hours back.</p>
<ul>${parts.outside.slice(0, 20).map((b) => html`<li><a href="/admin/bookings/${b.detailsId}">${localTime(snapshot, b.start)}</a> ${b.reasonName}, ${b.customerName || b.customerEmail || `customer ${b.customerId}`}</li>`)}</ul></div>`
    : ''
}
<p><a href="/admin/schedules">All schedules</a> · ${schedule.retiredAt ? '' : html`<a href="/admin/schedules/${schedule.id}/calendar">Week calendar</a> · `}
<a href="/admin/bookings?schedule=${schedule.id}&amp;when=past">Bookings</a>${schedule.retiredAt ? '' : html` · <a href="/admin/schedules/${schedule.id}/book">Book by hand</a>`}</p>
<section>${scheduleForm(ctx, `/admin/schedules/${schedule.id}`, parts.values ?? scheduleValues(schedule), parts.errors ?? {}, 'Save schedule', undefined, parts.flash)}</section>
<h2 id="reasons">Reasons</h2>
${flashAt(parts.flash, 'reasons')}
${inService.length === 0 ? html`<p class="alert">No reasons in service: customers can only book a schedule that has at least one.</p>` : ''}
${inService.map((r) => reasonRow(ctx, schedule.id, r, re?.id === r.id ? re.values : null, re?.id === r.id ? re.errors : {}, parts.flash))}
${retired.length ? html`<h3>Retired reasons</h3>${retired.map((r) => retiredReasonRow(ctx, (t) => localTime(snapshot, t), schedule.id, r))}` : ''}
<section><h3>Add a reason</h3><form method="post" action="/admin/schedules/${schedule.id}/reasons" class="row">${csrfField(ctx)}${onceField(parts.reasonOnce)}
${input('Name', NEW_REASON + 'name', newValues.name, newErrors, { required: true })}
${input('Duration (minutes)', NEW_REASON + 'duration_minutes', newValues.duration_minutes, newErrors, { type: 'number', min: 1, required: true })}
${input('Description', NEW_REASON + 'description', newValues.description, newErrors)}
<button>Add reason</button></form></section>
<h2 id="form">Booking form</h2>
<section>${formEditor(ctx, schedule, parts.formRows ?? [...formRowsOf(schedule), blankRow(schedule.form.length)], parts.formErrors ?? {}, parts.flash)}</section>
${
  schedule.retiredAt
    ? ''
    : html`<h2>Retire</h2>
<section><p class="muted">Retiring takes the schedule out of service: it is no longer offered through the API nor for new bookings. Its bookings stay in the admin area and in the customers' histories, and it can be restored. It is refused while upcoming bookings exist.</p>
<a class="button secondary" href="/admin/schedules/${schedule.id}/retire">Retire this schedule</a></section>`
}`,
    { flash: parts.flash?.at === 'top' ? parts.flash.text : undefined, errors: allErrors, labels: labelsOf(allErrors) },
  );
}

/** The list of schedules and the creation of a new one. */
function scheduleListRoutes(app: FastifyInstance, { db, clock }: AdminDeps): void {
  app.get('/schedules', async (request, reply) => {
    const ctx = state(request).page;
    const schedules = await listSchedules(db);
    const saved = query(request).saved;
    return sendPage(
      reply,
      page(
        ctx,
        'Schedules',
        html`<p><a class="button" href="/admin/schedules/new">New schedule</a></p>
${
  schedules.length === 0
    ? html`<p>No schedules yet.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th>Id</th><th>Name</th><th>Reasons</th><th>Grid</th><th>Capacity</th><th>Status</th><th></th></tr></thead><tbody>
${schedules.map(
  (
    s,
  ) => html`<tr${s.retiredAt ? html` class="retired"` : ''}><td>${s.id}</td><td><a href="/admin/schedules/${s.id}">${s.name}</a></td><td>${s.reasons
    .filter((r) => !r.retiredAt)
    .map((r) => `${r.name} (${r.durationMinutes} min)`)
    .join(', ')}</td>
<td>${s.settings.slotIntervalMinutes} min</td><td>${s.settings.capacity}</td><td>${s.retiredAt ? 'retired' : 'in service'}</td><td>${s.retiredAt ? '' : html`<a href="/admin/schedules/${s.id}/calendar">Calendar</a>`}</td></tr>`,
)}
</tbody></table></div>`
}`,
        { flash: saved ? FLASHES[saved]?.text : undefined },
      ),
    );
  });

  const newSchedulePage = (request: FastifyRequest, values: Record<string, string>, errors: Errors, once: string) => {
    const ctx = state(request).page;
    return page(
      ctx,
      'New schedule',
      html`<section>${scheduleForm(ctx, '/admin/schedules', values, errors, 'Create schedule', once)}</section>`,
      { errors, labels: labelsOf(errors) },
    );
  };

  app.get('/schedules/new', async (request, reply) => {
    const once = formTokenOfPage(request, reply);
    if (once === null) return reply;
    return sendPage(reply, newSchedulePage(request, scheduleValues(null), {}, once));
  });

  app.post('/schedules', async (request, reply) => {
    const input = body(request);
    const once = text(input, '_once');
    await checkFormToken(db, once);
    const changed = valuesAfterHoursAction(scheduleValuesFromInput(input), text(input, '_action'));
    if (changed) return sendPage(reply, newSchedulePage(request, changed, {}, once));
    const now = clock();
    try {
      const id = await createSchedule(
        db,
        scheduleFromForm(input),
        now,
        claimFormToken(once, now, (created: number) => `/admin/schedules/${created}`),
      );
      return reply.redirect(`/admin/schedules/${id}?saved=created`, 303);
    } catch (error) {
      return sendPage(reply, newSchedulePage(request, scheduleValuesFromInput(input), errorsOf(error, 'name'), once), 400);
    }
  });
}

/** Upcoming bookings of a schedule in service that lie outside its opening hours as they are now. */
export async function bookingsOutsideHours(db: Db, snapshot: Snapshot, scheduleId: number, now: number): Promise<BookingRow[]> {
  const view = snapshot.schedules.get(scheduleId);
  const zone = snapshot.zone;
  if (!view || !zone) return [];
  const upcoming = await listBookings(db, { when: 'upcoming', scheduleId, limit: 10_000 }, now);
  return upcoming.filter((b) => !withinOpeningHours(view.rules, zone, b.start, b.end));
}

/**
 * Upcoming bookings inside the opening hours now that the edit's hours and exceptions would leave outside.
 * Those already outside are listed on the schedule's page anyway, so a save that does not move the hours
 * asks nothing.
 */
async function bookingsLeftOutside(db: Db, snapshot: Snapshot, scheduleId: number, edit: ScheduleEdit, now: number): Promise<BookingRow[]> {
  const view = snapshot.schedules.get(scheduleId);
  const zone = snapshot.zone;
  if (!view || !zone) return [];
  const rules: ScheduleRules = {
    ...view.rules,
    weeklyHours: edit.weeklyHours,
    exceptions: new Map(edit.exceptions.map((e) => [parseDate(e.date)!, e.hours])),
  };
  const upcoming = await listBookings(db, { when: 'upcoming', scheduleId, limit: 10_000 }, now);
  return upcoming.filter((b) => withinOpeningHours(view.rules, zone, b.start, b.end) && !withinOpeningHours(rules, zone, b.start, b.end));
}

/** Whether the edit changes the weekly hours or the exceptions (the saved-message then goes beside the hours). */
const hoursChanged = (schedule: StoredSchedule, edit: ScheduleEdit) =>
  WEEKDAYS.some((d) => intervalsToText(schedule.weeklyHours[d] ?? []) !== intervalsToText(edit.weeklyHours[d] ?? [])) ||
  exceptionsToText(schedule.exceptions) !== exceptionsToText(edit.exceptions);

/**
 * The page that stops a save leaving bookings outside the hours: lists them, says they stay booked; the
 * form carries everything typed, so "Confirm" saves it and "Back" shows it again unsaved.
 */
function hoursWarningPage(request: FastifyRequest, schedule: StoredSchedule, input: FormInput, outside: readonly BookingRow[]): string {
  const { page: ctx, snapshot } = state(request);
  const n = outside.length;
  const typed = Object.entries(input).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string' && !['_csrf', '_action', '_outside_confirmed'].includes(entry[0]),
  );
  return page(
    ctx,
    `Save the hours of ${schedule.name}?`,
    html`<section class="confirm" id="hours-warning"><p><strong>${n} upcoming booking${n === 1 ? ' would be' : 's would be'} outside the new opening hours:</strong></p>
<ul>${outside.map((b) => html`<li><a href="/admin/bookings/${b.detailsId}">${localTime(snapshot, b.start)}</a> ${b.customerName || b.customerEmail || `customer ${b.customerId}`}, ${b.reasonName}</li>`)}</ul>
<p>${n === 1 ? 'It stays' : 'They stay'} booked: nobody is e-mailed. The calendar and this schedule's page flag ${n === 1 ? 'it' : 'them'} "outside the opening hours"; move or cancel ${n === 1 ? 'it' : 'them'} there if needed.</p>
<form method="post" action="/admin/schedules/${schedule.id}" class="row">${csrfField(ctx)}
${typed.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<input type="hidden" name="_outside_confirmed" value="${outside.map((b) => b.id).join(',')}">
<button class="delete" name="_action" value="confirm">Confirm: save the hours</button>
<button class="secondary" name="_action" value="back" formaction="/admin/schedules/${schedule.id}#hours">Back, change nothing</button></form></section>`,
  );
}

/** One schedule's page: show, save, retire. */
function scheduleEditRoutes(app: FastifyInstance, { db, clock }: AdminDeps): void {
  app.get('/schedules/:id', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    const once = formTokenOfPage(request, reply);
    if (once === null) return reply;
    const outside = await bookingsOutsideHours(db, state(request).snapshot, schedule.id, clock());
    return sendPage(reply, editPage(request, schedule, { flash: flashOf(request), reasonOnce: once, outside }));
  });

  app.post('/schedules/:id', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    const input = body(request);
    const action = text(input, '_action');
    const typed = scheduleValuesFromInput(input);
    // "Add interval", "Remove" and the warning's "Back" show the form again as typed, saving nothing
    const shown = action === 'back' ? typed : valuesAfterHoursAction(typed, action);
    if (shown) return sendPage(reply, editPage(request, schedule, { values: shown, reasonOnce: newFormToken() }));
    let edit: ScheduleEdit;
    try {
      edit = scheduleFromForm(input);
    } catch (error) {
      return sendPage(
        reply,
        editPage(request, schedule, { values: typed, errors: errorsOf(error, 'name'), reasonOnce: newFormToken() }),
        400,
      );
    }
    // asked again when a booking the operator did not see would be left outside (booked meanwhile)
    const confirmed = new Set(text(input, '_outside_confirmed').split(','));
    const outside = await bookingsLeftOutside(db, state(request).snapshot, schedule.id, edit, clock());
    if (outside.some((b) => !confirmed.has(String(b.id)))) return sendPage(reply, hoursWarningPage(request, schedule, input, outside));
    try {
      await updateSchedule(db, schedule.id, edit);
    } catch (error) {
      return sendPage(
        reply,
        editPage(request, schedule, { values: typed, errors: errorsOf(error, 'name'), reasonOnce: newFormToken() }),
        400,
      );
    }
    return reply.redirect(
      `/admin/schedules/${schedule.id}${hoursChanged(schedule, edit) ? '?saved=hours#hours' : '?saved=saved#schedule'}`,
      303,
    );
  });

  app.get('/schedules/:id/retire', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    return sendPage(
      reply,
      confirmPage(
        state(request).page,
        `Retire the schedule ${schedule.name}?`,
        html`<p>Retiring takes <strong>${schedule.name}</strong> out of service:</p>
<ul><li>it is no longer listed by the API, and no new booking can be made for it (by the API or by hand);</li>
<li>its past and cancelled bookings stay, in the booking list and in the customers' histories;</li>
<li>it stays here, marked retired, and can be restored.</li></ul>
<p>It is refused while the schedule has upcoming bookings: cancel those first.</p>`,
        `/admin/schedules/${schedule.id}/retire`,
        'Confirm: retire this schedule',
        `/admin/schedules/${schedule.id}`,
      ),
    );
  });

  app.post('/schedules/:id/retire', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    if (!schedule.retiredAt) await retireSchedule(db, schedule.id, clock());
    return reply.redirect(`/admin/schedules/${schedule.id}?saved=retired`, 303);
  });

  app.post('/schedules/:id/restore', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    await restoreSchedule(db, schedule.id);
    return reply.redirect(`/admin/schedules/${schedule.id}?saved=restored`, 303);
  });
}

/** A schedule's reasons: add, edit, delete. */
function reasonRoutes(app: FastifyInstance, { db, clock }: AdminDeps): void {
  app.post('/schedules/:id/reasons', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    const values = reasonValues(body(request), NEW_REASON);
    const once = text(body(request), '_once');
    await checkFormToken(db, once);
    const now = clock();
    try {
      const id = await addReason(
        db,
        schedule.id,
        reasonFromForm(values),
        claimFormToken(once, now, (created: number) => `/admin/schedules/${schedule.id}#reason${created}`),
      );
      return reply.redirect(`/admin/schedules/${schedule.id}?saved=reason&reason=${id}#reason${id}`, 303);
    } catch (error) {
      return sendPage(
        reply,
        editPage(request, schedule, { reasonErrors: { id: 'new', values, errors: errorsOf(error, 'name') }, reasonOnce: once }),
        400,
      );
    }
  });

  app.post('/schedules/:id/reasons/:reason', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    const reasonId = reasonIdOr404(request);
    const values = reasonValues(body(request), `reason${reasonId}_`);
    try {
      await editReason(db, schedule.id, reasonId, reasonFromForm(values));
      return reply.redirect(`/admin/schedules/${schedule.id}?saved=reason&reason=${reasonId}#reason${reasonId}`, 303);
    } catch (error) {
      return sendPage(
        reply,
        editPage(request, schedule, {
          reasonErrors: { id: reasonId, values, errors: errorsOf(error, 'name') },
          reasonOnce: newFormToken(),
        }),
        400,
      );
    }
  });

  app.get('/schedules/:id/reasons/:reason/retire', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    const reason = schedule.reasons.find((r) => r.id === reasonIdOr404(request));
    if (!reason) throw new NotFound('Reason not found');
    return sendPage(
      reply,
      confirmPage(
        state(request).page,
        `Retire the reason ${reason.name}?`,
        html`<p>Retiring takes <strong>${reason.name}</strong> (${schedule.name}) out of service:</p>
<ul><li>it is no longer listed by the API, and no new booking can be made for it;</li>
<li>its past and cancelled bookings stay, in the booking list and in the customers' histories;</li>
<li>it stays on the schedule's page under "Retired reasons" and can be restored.</li></ul>
<p>It is refused while the reason has upcoming bookings: cancel those first.</p>`,
        `/admin/schedules/${schedule.id}/reasons/${reason.id}/retire`,
        'Confirm: retire this reason',
        `/admin/schedules/${schedule.id}#reasons`,
      ),
    );
  });

  app.post('/schedules/:id/reasons/:reason/retire', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    const reasonId = reasonIdOr404(request);
    if (!schedule.reasons.find((r) => r.id === reasonId)?.retiredAt) await retireReason(db, schedule.id, reasonId, clock());
    return reply.redirect(`/admin/schedules/${schedule.id}?saved=reason_retired#reasons`, 303);
  });

  app.post('/schedules/:id/reasons/:reason/restore', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    await restoreReason(db, schedule.id, reasonIdOr404(request));
    return reply.redirect(`/admin/schedules/${schedule.id}?saved=reason_restored#reasons`, 303);
  });
}

/** A schedule's booking form. */
function bookingFormRoutes(app: FastifyInstance, { db }: AdminDeps): void {
  app.post('/schedules/:id/form', async (request, reply) => {
    const schedule = await scheduleOr404(db, request);
    const rows = formRowsFromInput(body(request));
    // "Add field" without JavaScript: the rows as typed and one more empty one, nothing saved
    if (text(body(request), '_action') === 'add_row')
      return sendPage(reply, editPage(request, schedule, { formRows: [...rows, blankRow(rows.length)], reasonOnce: newFormToken() }));
    try {
      await saveForm(db, schedule.id, formFromRows(rows));
      return reply.redirect(`/admin/schedules/${schedule.id}?saved=form#form`, 303);
    } catch (error) {
      const shown = rowsShownAgain(rows, errorsOf(error, 'f0_name'));
      return sendPage(
        reply,
        editPage(request, schedule, { formRows: shown.rows, formErrors: shown.errors, reasonOnce: newFormToken() }),
        400,
      );
    }
  });
}

export async function scheduleRoutes(app: FastifyInstance, deps: AdminDeps): Promise<void> {
  scheduleListRoutes(app, deps);
  scheduleEditRoutes(app, deps);
  reasonRoutes(app, deps);
  bookingFormRoutes(app, deps);
}
