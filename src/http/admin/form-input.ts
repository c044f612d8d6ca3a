// A submitted admin form as @fastify/formbody parses it: a name sent twice arrives as a list.
export type FormInput = Readonly<Record<string, string | string[] | undefined>>;

/** One value of a submitted form (the last one if a name was sent twice). */
export function text(input: FormInput, name: string): string {
  const v = input[name];
  return (Array.isArray(v) ? v[v.length - 1] : v) ?? '';
}
