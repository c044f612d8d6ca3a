// What the admin area accepts before anything else looks at a request (docs/security.md "Input limits"):
// bodies only as HTML forms send them (application/x-www-form-urlencoded; 415 otherwise), at most
// ADMIN_BODY_LIMIT bytes (413), each query parameter at most once, and no control characters in the path,
// the query or a form value (400, naming the field). These hooks run in onRequest and preValidation, so
// before the session and CSRF checks (a preHandler) and before any handler or database sees the input.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { controlCharacterProblem } from '../../core/text.js';
import { BadFormInput } from './form-input.js';

/** The largest admin form body: the schedule form with its hours, exceptions and 200 form rows fits easily. */
export const ADMIN_BODY_LIMIT = 128 * 1024;

const FORM_TYPE = 'application/x-www-form-urlencoded';

class ClientError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  if (request.headers['transfer-encoding'] !== undefined) return true;
  return length !== undefined && length !== '0';
}

/** Checks every value of a parsed query or form: text, once, without control characters (line breaks only in bodies). */
function checkValues(values: unknown, where: 'query' | 'form' | 'path'): void {
  if (values === null || values === undefined || typeof values !== 'object') return;
  for (const [name, value] of Object.entries(values)) {
    const what = where === 'form' ? `The field ${name}` : where === 'query' ? `The query parameter ${name}` : 'The address';
    if (controlCharacterProblem(name) !== null)
      throw new BadFormInput(`A ${where === 'form' ? 'field' : 'parameter'} name contains control characters.`);
    if (Array.isArray(value)) {
      if (where === 'form') {
        // a name twice in a form: the handler that reads it answers 400 (form-input.ts text()); the values are still checked
        for (const item of value)
          if (typeof item === 'string' && controlCharacterProblem(item, true))
            throw new BadFormInput(`${what} contains control characters.`);
        continue;
      }
      throw new BadFormInput(`${what} was given more than once.`);
    }
    if (typeof value !== 'string') throw new BadFormInput(`${what} is not text.`);
    // form values may be multi-line (a textarea); the field's own parser refuses line breaks where it is one line
    if (controlCharacterProblem(value, where === 'form') !== null) throw new BadFormInput(`${what} contains control characters.`);
  }
}

export function restrictFormBodies(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (hasBody(request)) {
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== FORM_TYPE) throw new ClientError(415, 'The administration area accepts HTML form submissions only.');
      const length = Number(request.headers['content-length'] ?? 0);
      if (length > ADMIN_BODY_LIMIT) throw new ClientError(413, 'The form is too large.');
    }
    checkValues(request.query, 'query');
  });
  app.addHook('preValidation', async (request) => {
    checkValues(request.params, 'path');
    checkValues(request.body, 'form');
  });
}
