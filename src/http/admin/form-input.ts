// A submitted admin form as @fastify/formbody parses it: a name sent twice arrives as a list.
export type FormInput = Readonly<Record<string, string | string[] | undefined>>;

/** Input of a shape no admin form sends (a name twice, a non-text value): answered 400 with its own page. */
export class BadFormInput extends Error {
  readonly statusCode = 400;
  constructor(message: string) {
    super(message);
    this.name = 'BadFormInput';
  }
}

/**
 * One value of a submitted form: '' when missing. A name sent twice, or a value that is not text (a body
 * that is not a form), is bad input, answered 400: never a guess at which value was meant, never a 500.
 */
export function text(input: FormInput, name: string): string {
  const v: unknown = Object.hasOwn(input, name) ? input[name] : undefined;
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) throw new BadFormInput(`The field ${name} was sent more than once.`);
  throw new BadFormInput(`The field ${name} is not text.`);
}
