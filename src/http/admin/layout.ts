// Page frame and form pieces of the admin area. Every input has a label; an error is shown right
// under its field and tied to it with aria-describedby; values typed are passed back in after an error.
import type { Session } from '../../app/admin-auth.js';
import { mayOpen } from './roles.js';
import { html, type Markup } from './html.js';
import { CANONICAL_ZONE_NAMES } from '../../core/time/zone-names.js';
import { SCHEDULE_EDITOR_CSS, SCHEDULE_EDITOR_JS } from './schedule-editor-assets.js';

export interface PageContext {
  /** null on the setup and sign-in pages */
  email: string | null;
  csrf: string;
  installationName: string;
  /** the path of the page, so the menu can mark where the admin is */
  path?: string;
  /** the signed-in user's role and schedules: the menu shows only what they may open */
  session?: Pick<Session, 'role' | 'scheduleIds'>;
}

export type Errors = Readonly<Record<string, string>>;

const NAV: [string, string][] = [
  ['/admin/bookings', 'Bookings'],
  ['/admin/calendar', 'Calendar'],
  ['/admin/schedules', 'Schedules'],
  ['/admin/customers', 'Customers'],
  ['/admin/closures', 'Closures'],
  ['/admin/mail', 'E-mail'],
  ['/admin/webhooks', 'Webhooks'],
  ['/admin/settings', 'Configuration'],
  ['/admin/users', 'Users'],
  ['/admin/activity', 'Activity'],
];

/** A parser's reason as a sentence for people: "must be a non-empty string" becomes "Enter a value." */
export function humanReason(reason: string): string {
  const known: [RegExp, string][] = [
    [/^must be a non-empty string$/, 'Enter a value.'],
    [/^a select needs a non-empty list of non-empty strings$/, 'A list needs its options: one per line.'],
    [/^must be an integer from (-?\d+) to (-?\d+)(, got .*)?$/s, 'Enter a whole number from $1 to $2.'],
  ];
  for (const [pattern, text] of known) if (pattern.test(reason)) return reason.replace(pattern, text);
  const sentence = reason.charAt(0).toUpperCase() + reason.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/**
 * Every error of the page at once, at the top, each a link to its field (the page's script moves the focus
 * here, so the page opens on it). `labels` names the fields; a field without one is named by its label
 * text on the page through the link.
 */
export function errorSummary(errors: Errors, labels: Readonly<Record<string, string>> = {}): Markup {
  const entries = Object.entries(errors);
  if (entries.length === 0) return html``;
  return html`<div class="error-summary" id="error-summary" role="alert" tabindex="-1"><h2>${entries.length === 1 ? 'There is a problem' : `There are ${entries.length} problems`}</h2>
<ul>${entries.map(([name, message]) => html`<li><a href="#${name}">${labels[name] ? `${labels[name]}: ` : ''}${message}</a></li>`)}</ul></div>`;
}

export function page(
  ctx: PageContext,
  title: string,
  body: Markup,
  options: { flash?: string | undefined; errors?: Errors; labels?: Readonly<Record<string, string>>; current?: string } = {},
): string {
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${ctx.installationName}</title>
<link rel="stylesheet" href="/admin/assets/admin.css">
<script src="/admin/assets/admin.js" defer></script>
</head><body>
<header class="top"><a class="brand" href="/admin">${ctx.installationName}</a>
${
  ctx.email
    ? html`<nav aria-label="Main">${NAV.filter(([href]) => !ctx.session || mayOpen(ctx.session, href)).map(([href, label]) =>
        ctx.path === href || ctx.path?.startsWith(`${href}/`)
          ? html`<a href="${href}" aria-current="page" class="current">${label}</a>`
          : html`<a href="${href}">${label}</a>`,
      )}</nav>
<div class="who"><a href="/admin/password">${ctx.email}</a>
<form method="post" action="/admin/signout" class="inline">${csrfField(ctx)}<button class="link">Sign out</button></form></div>`
    : ''
}
</header>
<main><h1>${title}</h1>
${options.errors ? errorSummary(options.errors, options.labels) : ''}
${options.flash ? html`<p class="flash" role="status">${options.flash}</p>` : ''}
${body}</main></body></html>`}`;
}

export const csrfField = (ctx: PageContext) => html`<input type="hidden" name="_csrf" value="${ctx.csrf}">`;

/** The one-time token of a form that creates something (app/form-tokens.ts); kept when the form comes back with errors. */
export const onceField = (token: string) => html`<input type="hidden" name="_once" value="${token}">`;

/**
 * The page that asks before a destructive action: what will happen, and a "Confirm …" button posting to
 * `action`; "Back" leads to `back` without changing anything.
 */
export function confirmPage(
  ctx: PageContext,
  title: string,
  consequences: Markup,
  action: string,
  confirmLabel: string,
  back: string,
  /** the one-time token, when confirming creates something */
  once?: string,
): string {
  return page(
    ctx,
    title,
    html`<section class="confirm">${consequences}
<form method="post" action="${action}" class="row">${csrfField(ctx)}${once ? onceField(once) : ''}<button class="delete">${confirmLabel}</button>
<a class="button secondary" href="${back}">Back, change nothing</a></form></section>`,
  );
}

export const fieldError = (errors: Errors, name: string) =>
  errors[name] ? html`<p class="error" id="${name}-error">${errors[name]}</p>` : '';

const describedBy = (errors: Errors, name: string) => (errors[name] ? `${name}-error` : undefined);

export interface InputOptions {
  type?: string;
  hint?: string;
  required?: boolean;
  placeholder?: string;
  autocomplete?: string;
  min?: number;
  max?: number;
}

export function input(label: string, name: string, value: string, errors: Errors, o: InputOptions = {}): Markup {
  const err = describedBy(errors, name);
  return html`<div class="field${errors[name] ? ' invalid' : ''}"><label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="${o.type ?? 'text'}" value="${value}"${o.required ? html` required` : ''}${o.placeholder ? html` placeholder="${o.placeholder}"` : ''}${o.autocomplete ? html` autocomplete="${o.autocomplete}"` : ''}${o.min !== undefined ? html` min="${o.min}"` : ''}${o.max !== undefined ? html` max="${o.max}"` : ''}${err ? html` aria-invalid="true" aria-describedby="${err}"` : ''}>
${o.hint ? html`<small>${o.hint}</small>` : ''}${fieldError(errors, name)}</div>`;
}

export function textarea(label: string, name: string, value: string, errors: Errors, o: { hint?: string; rows?: number } = {}): Markup {
  const err = describedBy(errors, name);
  return html`<div class="field${errors[name] ? ' invalid' : ''}"><label for="${name}">${label}</label>
<textarea id="${name}" name="${name}" rows="${o.rows ?? 3}"${err ? html` aria-invalid="true" aria-describedby="${err}"` : ''}>${value}</textarea>
${o.hint ? html`<small>${o.hint}</small>` : ''}${fieldError(errors, name)}</div>`;
}

export function select(
  label: string,
  name: string,
  value: string,
  choices: readonly (string | [string, string])[],
  errors: Errors,
): Markup {
  const err = describedBy(errors, name);
  return html`<div class="field${errors[name] ? ' invalid' : ''}"><label for="${name}">${label}</label>
<select id="${name}" name="${name}"${err ? html` aria-invalid="true" aria-describedby="${err}"` : ''}>${choices.map((c) => {
    const [v, l] = typeof c === 'string' ? [c, c] : c;
    return html`<option value="${v}"${v === value ? html` selected` : ''}>${l}</option>`;
  })}</select>${fieldError(errors, name)}</div>`;
}

export function checkbox(label: string, name: string, checked: boolean, errors: Errors = {}): Markup {
  return html`<div class="field check"><input type="checkbox" id="${name}" name="${name}"${checked ? html` checked` : ''}>
<label for="${name}">${label}</label>${fieldError(errors, name)}</div>`;
}

export const ADMIN_CSS = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#f5f6f8}
a{color:#1f5fbf}
.top{display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center;padding:.6rem 1rem;background:#1d2330;color:#fff}
.top a{color:#fff;text-decoration:none}.top nav{display:flex;flex-wrap:wrap;gap:.25rem 1rem}.top nav a:hover{text-decoration:underline}.top nav a.current{font-weight:700;border-bottom:3px solid #7fb0ff;padding-bottom:.1rem}
.brand{font-weight:700}.who{margin-left:auto;display:flex;gap:.75rem;align-items:center;font-size:.9rem}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
section,.card{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:1rem;margin:0 0 1rem}
.field{margin:0 0 .8rem;display:flex;flex-direction:column;gap:.2rem}
.field.check{flex-direction:row;align-items:center;gap:.5rem}
label{font-weight:600;font-size:.95rem}small{color:#5b6472}
input,select,textarea{font:inherit;padding:.45rem .55rem;border:1px solid #b8bfca;border-radius:4px;max-width:100%;background:#fff}
input[type=checkbox]{width:1.1rem;height:1.1rem}
.invalid input,.invalid select,.invalid textarea{border-color:#c0262d;outline:1px solid #c0262d}
.error{color:#b0171e;margin:0;font-size:.9rem}
.error-summary{border:2px solid #b0171e;background:#fff;padding:.5rem 1rem;border-radius:6px;margin:0 0 1rem}.error-summary h2{margin:.25rem 0;color:#b0171e;font-size:1.1rem}.error-summary:focus{outline:3px solid #f0a3a3}
.flash{background:#e5f4e8;border:1px solid #9fd3aa;padding:.5rem .75rem;border-radius:4px}
.alert{background:#fff4e0;border:1px solid #f0c36d;padding:.5rem .75rem;border-radius:4px}
.danger{background:#fde8e8;border:1px solid #f0a3a3;padding:.5rem .75rem;border-radius:4px}
button,.button{font:inherit;padding:.45rem .9rem;border-radius:4px;border:1px solid #1f5fbf;background:#1f5fbf;color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,.button.secondary{background:#fff;color:#1f5fbf}
button.delete{background:#b0171e;border-color:#b0171e}
button.link{background:none;border:none;color:inherit;text-decoration:underline;padding:0}
form.inline{display:inline}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:0 1rem}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #e3e6eb;vertical-align:top}
th{font-size:.85rem;color:#5b6472}
.row{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end}
.row .field{margin:0}
.token{font-family:ui-monospace,monospace;word-break:break-all;background:#f0f2f5;padding:.5rem;border-radius:4px;display:block}
.week{display:grid;grid-template-columns:repeat(7,minmax(9rem,1fr));gap:.5rem;overflow-x:auto}
.day{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:.5rem;min-height:6rem}
.day h3{font-size:.95rem;margin:0 0 .4rem}.day.closed{background:#f0f1f3}
.appt{display:block;border-left:3px solid #1f5fbf;background:#eef3fb;padding:.25rem .4rem;margin:0 0 .35rem;font-size:.9rem;text-decoration:none;color:inherit}
.appt.outside{border-left-color:#b0171e;background:#fde8e8}
.muted{color:#5b6472}
td input:not([type=checkbox]):not(.narrow),td textarea{width:100%;min-width:7rem}
fieldset{border:1px solid #dde1e7;border-radius:4px;margin:0 0 .8rem;padding:.5rem .75rem}legend{font-weight:600;font-size:.95rem}
.narrow{width:4.5rem}.mail-text{white-space:pre-wrap;margin:0}iframe{border:1px solid #dde1e7;background:#fff}
.slots{display:flex;flex-wrap:wrap;gap:.4rem}.slots label{font-weight:400;border:1px solid #b8bfca;border-radius:4px;padding:.25rem .5rem;background:#fff}
@media (max-width:40rem){.who{margin-left:0}th,td{padding:.35rem .3rem}.week{grid-template-columns:1fr}}
${SCHEDULE_EDITOR_CSS}`;

// The one script, progressive enhancement only (everything works without it): a copy button for the
// token, which selects the token and says so where the clipboard API is missing or refused (plain HTTP on a
// network address); and on the booking-by-hand page, times listed for another reason or day are set aside
// once the reason or day changes.
export const ADMIN_JS = `
function selectText(target) {
  const range = document.createRange();
  range.selectNodeContents(target);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}
document.addEventListener('click', (event) => {
  const button = event.target.closest('[data-copy]');
  if (!button) return;
  const target = document.getElementById(button.getAttribute('data-copy'));
  if (!target) return;
  const status = document.getElementById('copy-status');
  const say = (text) => { if (status) status.textContent = text; };
  const fallback = () => {
    selectText(target);
    say('Copying is not available here (the browser allows it only over HTTPS or on localhost). The token is selected: press Ctrl+C (⌘C on a Mac) to copy it.');
  };
  if (!navigator.clipboard || !navigator.clipboard.writeText) return fallback();
  navigator.clipboard.writeText(target.textContent.trim()).then(() => { button.textContent = 'Copied'; say('The token is in the clipboard.'); }, fallback);
});
document.querySelectorAll('[data-copy]').forEach((b) => { b.hidden = false; });
const proposal = document.getElementById('zone-proposal');
const zoneSelect = document.getElementById('timezone');
if (proposal && zoneSelect) {
  const canonical = ${JSON.stringify(CANONICAL_ZONE_NAMES)};
  const found = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const zone = canonical[found] || found;
  if (zone && [...zoneSelect.options].some((o) => o.value === zone)) {
    zoneSelect.value = zone;
    proposal.textContent = 'Proposed from this browser: ' + zone + '. Choose another if the practice is elsewhere.';
    proposal.hidden = false;
  }
}
const summary = document.getElementById('error-summary');
if (summary) summary.focus();
// booking by hand and rescheduling: the times listed are those of the reason and day last shown
document.querySelectorAll('#book-form, #reschedule-form').forEach((bookForm) => {
  const setAside = () => {
    bookForm.querySelectorAll('input[name=time]').forEach((r) => { r.checked = false; r.disabled = true; });
    const note = bookForm.querySelector('.stale-note');
    if (note) note.hidden = false;
  };
  bookForm.querySelectorAll('select[name=reason], input[name=day]').forEach((c) => c.addEventListener('change', setAside));
});
${SCHEDULE_EDITOR_JS}`;
