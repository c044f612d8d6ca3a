// HTML for the admin area: a tagged template that escapes every interpolated value unless it is
// already-built markup. Escaping is the default, so a customer's or API client's text can never
// become markup by forgetting a call. (Chosen over TSX with @kitajs/html, whose children are raw
// unless marked `safe`: the opposite default.)
import { escapeHtml } from '../../core/text.js';

export class Markup {
  constructor(readonly text: string) {}
  toString() {
    return this.text;
  }
}

type Part = Markup | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Markup) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(part);
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Markup {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Markup(out);
}

/** Markup from a trusted constant (never from input). */
export const raw = (text: string) => new Markup(text);
