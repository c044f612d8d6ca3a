// The schedule editor's part of the admin stylesheet and script (appended to them in layout.ts). Without
// the script, "Add interval", "Remove" and "Add field" are submit buttons that show the form again with one
// pair or row more or fewer, keeping what was typed; with it they do the same in place.

export const SCHEDULE_EDITOR_CSS = `
.default-submit{position:absolute;left:-9999px;width:1px;height:1px;overflow:hidden}
button.small{padding:.25rem .6rem;font-size:.9rem}
.hours-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(24rem,100%),1fr));gap:0 1rem}
.day-hours .interval{display:flex;flex-wrap:wrap;gap:.4rem .6rem;align-items:flex-end;margin:0 0 .5rem}
.day-hours .interval label{display:flex;flex-direction:column;font-weight:400;font-size:.85rem}
.day-hours input[type=time]{width:8.5rem}
.day-hours .field{margin:.6rem 0 0}
@media (max-width:40rem){
.form-rows,.form-rows tbody,.form-rows tr,.form-rows td{display:block;width:100%}
.form-rows thead{position:absolute;left:-9999px}
.form-rows tr{border:1px solid #dde1e7;border-radius:6px;margin:0 0 .75rem;padding:.25rem .6rem}
.form-rows td{border:none;padding:.3rem 0}
.form-rows td::before{content:attr(data-label);display:block;font-size:.85rem;font-weight:600;color:#5b6472}
}
`;

export const SCHEDULE_EDITOR_JS = `
function renumber(node, pattern, replacement) {
  node.querySelectorAll('[id],[name],[for],[value],[aria-describedby]').forEach((el) => {
    for (const attr of ['id', 'name', 'for', 'aria-describedby']) {
      if (el.hasAttribute(attr)) el.setAttribute(attr, el.getAttribute(attr).replace(pattern, replacement));
    }
    if (el.tagName === 'BUTTON' && el.value) el.value = el.value.replace(pattern, replacement);
  });
}
function cleared(node) {
  node.querySelectorAll('.error').forEach((e) => e.remove());
  node.querySelectorAll('.invalid').forEach((e) => e.classList.remove('invalid'));
  node.querySelectorAll('input, textarea, select').forEach((el) => {
    if (el.type === 'checkbox') el.checked = false;
    else if (el.tagName === 'SELECT') el.selectedIndex = 0;
    else if (el.type !== 'hidden') el.value = '';
    el.removeAttribute('aria-invalid');
  });
  return node;
}
document.addEventListener('click', (event) => {
  const add = event.target.closest('[data-add-interval]');
  if (add) {
    event.preventDefault();
    const day = add.getAttribute('data-add-interval');
    const list = document.getElementById('intervals-' + day);
    const rows = list.querySelectorAll('.interval');
    const next = Math.max(-1, ...[...list.querySelectorAll('input[name]')].map((i) => Number(i.name.split('_')[2]))) + 1;
    const row = cleared(rows[rows.length - 1].cloneNode(true));
    renumber(row, new RegExp('hours_' + day + '_\\\\d+_|remove:' + day + ':\\\\d+', 'g'), (m) => (m.startsWith('remove') ? 'remove:' + day + ':' + next : 'hours_' + day + '_' + next + '_'));
    list.appendChild(row);
    row.querySelector('input').focus();
    return;
  }
  const remove = event.target.closest('[data-remove-interval]');
  if (remove) {
    event.preventDefault();
    const row = remove.closest('.interval');
    const list = row.parentElement;
    if (list.querySelectorAll('.interval').length > 1) {
      const neighbour = row.nextElementSibling || row.previousElementSibling;
      row.remove();
      neighbour.querySelector('input').focus();
    } else cleared(row);
    return;
  }
  const addRow = event.target.closest('[data-add-row]');
  if (addRow) {
    event.preventDefault();
    const form = addRow.form;
    const count = form.querySelector('input[name=rows]');
    const rows = form.querySelectorAll('tbody tr');
    const n = Number(count.value);
    const row = cleared(rows[rows.length - 1].cloneNode(true));
    renumber(row, /^f\\d+_/, 'f' + n + '_');
    row.querySelector('input[type=number]').value = String(n + 1);
    const nameInput = row.querySelector('input[name$="_name"]');
    nameInput.setAttribute('aria-label', 'New field name');
    rows[rows.length - 1].parentElement.appendChild(row);
    count.value = String(n + 1);
    nameInput.focus();
  }
});
`;
