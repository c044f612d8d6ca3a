// CSV as RFC 4180 describes it (docs/admin.md, "Find and export"): fields separated by commas, records by
// CRLF, a field quoted when it holds a comma, a quote, CR or LF, quotes inside doubled.
//
// Formula injection: a spreadsheet opening the file runs a cell that starts with =, +, - or @ as a formula
// (and some strip a leading tab or CR first), so a customer who types `=HYPERLINK(…)` as their name would
// put a live formula in the office's spreadsheet. Such cells get a leading apostrophe, which spreadsheets
// show as text (OWASP's advice); the value is then not byte-identical, which is the documented price.
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(value: string): string {
  const guarded = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** The header row and the records, each line ended by CRLF. */
export function csvDocument(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => `${row.map(csvField).join(',')}\r\n`).join('');
}
