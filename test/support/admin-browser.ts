// A browser stand-in for the admin area through app.inject: keeps cookies, fills in the CSRF field (and a
// creating form's one-time token) from the page it posts from.
import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/** The administrator of testInstallation (test/support/installation.ts). */
export const ADMIN = { email: 'admin@example.com', password: 'correct horse battery' };

export class AdminBrowser {
  cookies = new Map<string, string>();
  /** any app: a test installation's, or one of several built on one database (instances) */
  constructor(private readonly inst: { app: FastifyInstance }) {}

  /** A browser signed in as `email` (default: testInstallation's administrator); fails the test unless signing in redirects. */
  static async signedIn(inst: { app: FastifyInstance }, email = ADMIN.email, password = ADMIN.password): Promise<AdminBrowser> {
    const browser = new AdminBrowser(inst);
    const res = await browser.signIn(email, password);
    assert.equal(res.statusCode, 303, res.body);
    return browser;
  }

  private remember(res: LightMyRequestResponse) {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      if (c.value === '' || c.maxAge === 0 || (c.expires && c.expires.getTime() < Date.now())) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  get cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /** follows the redirect that gives a page with a creating form its one-time token (form=) */
  async get(url: string): Promise<LightMyRequestResponse> {
    const res = this.remember(await this.inst.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader } }));
    const location = String(res.headers.location ?? '');
    return res.statusCode === 303 && /[?&]form=/.test(location) ? this.get(location) : res;
  }

  /**
   * posts `form` with the CSRF field (and one-time token) of the page at `from` (default: `url`); fields the form
   * gives itself are kept. `from` null posts `form` as it is, without opening a page first.
   */
  async post(url: string, form: Record<string, string>, from: string | null = url): Promise<LightMyRequestResponse> {
    const fields: Record<string, string> = { ...form };
    if (from !== null) {
      const pageHtml = (await this.get(from)).body;
      const csrf = /name="_csrf" value="([^"]+)"/.exec(pageHtml)?.[1];
      if (csrf && fields._csrf === undefined) fields._csrf = csrf;
      // the one-time token of a creating form (the page has at most one)
      const once = /name="_once" value="([^"]+)"/.exec(pageHtml)?.[1];
      if (once && fields._once === undefined) fields._once = once;
    }
    return this.remember(
      await this.inst.app.inject({
        method: 'POST',
        url,
        payload: new URLSearchParams(fields).toString(),
        headers: { cookie: this.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      }),
    );
  }

  signIn(email = ADMIN.email, password = ADMIN.password) {
    return this.post('/admin/signin', { email, password });
  }
}
