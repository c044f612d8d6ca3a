// Errors in the admin area are pages in its frame, never the API's JSON: domain errors get their
// status, other client errors their own message, and a server error shows nothing but a pointer to the log.
import type { FastifyInstance } from 'fastify';
import { Conflict, DatabaseUnavailable, InvalidInput, NotFound } from '../../core/errors.js';
import { AlreadySubmitted } from '../../app/form-tokens.js';
import { html } from './html.js';
import { page, type PageContext } from './layout.js';
import { sendPage, state } from './context.js';

const FALLBACK_CONTEXT: PageContext = { email: null, csrf: '', installationName: 'Administration' };

export function errorPages(app: FastifyInstance): void {
  app.setErrorHandler(async (error, request, reply) => {
    const ctx: PageContext = (() => {
      try {
        return state(request).page;
      } catch {
        return FALLBACK_CONTEXT;
      }
    })();
    if (error instanceof NotFound)
      return sendPage(reply, page(ctx, 'Not found', html`<p>${error.message}.</p><p><a href="/admin">Back to the start page</a></p>`), 404);
    if (error instanceof Conflict)
      return sendPage(
        reply,
        page(ctx, 'Not possible', html`<p class="danger">${error.message}</p><p><a href="javascript:history.back()">Back</a></p>`),
        409,
      );
    if (error instanceof AlreadySubmitted)
      return sendPage(
        reply,
        page(
          ctx,
          error.missingToken ? 'Form not accepted' : 'Already submitted',
          error.missingToken
            ? html`<p class="danger" role="alert">This form could not be checked against double submission. Nothing was saved. Reload the page and send it again.</p>`
            : html`<p class="alert" role="alert">This form was already submitted. Nothing was created a second time.</p>
${error.outcome ? html`<p><a class="button" href="${error.outcome}">See what the first submission created</a></p>` : ''}`,
        ),
        409,
      );
    if (error instanceof DatabaseUnavailable) {
      request.log.warn({ err: error }, 'database unavailable');
      reply.header('retry-after', '5');
      return sendPage(
        reply,
        page(ctx, 'Temporarily unavailable', html`<p>The database cannot answer right now. Try again in a few seconds.</p>`),
        503,
      );
    }
    // input a handler did not catch is still the client's: a 400 page, never a 500 (nor an error-level log line)
    const status = error instanceof InvalidInput ? 400 : ((error as { statusCode?: number }).statusCode ?? 500);
    if (status < 500) return sendPage(reply, page(ctx, 'Bad request', html`<p>${(error as Error).message}</p>`), status);
    request.log.error({ err: error }, 'admin request failed');
    return sendPage(
      reply,
      page(ctx, 'Something went wrong', html`<p>The request failed. Nothing secret is shown here; see the server log.</p>`),
      500,
    );
  });
  app.setNotFoundHandler(async (_request, reply) => {
    return sendPage(reply, page(FALLBACK_CONTEXT, 'Not found', html`<p>There is no such page. <a href="/admin">Start page</a></p>`), 404);
  });
}
