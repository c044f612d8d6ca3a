// A browser stand-in for the admin area through app.inject: keeps cookies, fills in the CSRF field (and a
// creating form's one-time token) from the page it posts from.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export class AdminBrowser {
  cookies = new Map<string, string>();
  constructor(private readonly inst: { app: FastifyInstance }) {}

  private remember(res: LightMyRequestResponse) {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number }[]) {
      if (c.value === '' || c.maxAge === 0) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  private get cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    const res = this.remember(await this.inst.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader } }));
    const location = String(res.headers.location ?? '');
    return res.statusCode === 303 && /[?&]form=/.test(location) ? this.get(location) : res;
  }

  /** posts `form` with the CSRF field (and one-time token) of the page at `from` (default: `url`) */
  async post(url: string, form: Record<string, string>, from = url): Promise<LightMyRequestResponse> {
    const pageHtml = (await this.get(from)).body;
    const fields: Record<string, string> = { ...form };
    const csrf = /name="_csrf" value="([^"]+)"/.exec(pageHtml)?.[1];
    if (csrf && fields._csrf === undefined) fields._csrf = csrf;
    const once = /name="_once" value="([^"]+)"/.exec(pageHtml)?.[1];
    if (once && fields._once === undefined) fields._once = once;
    return this.remember(
      await this.inst.app.inject({
        method: 'POST',
        url,
        payload: new URLSearchParams(fields).toString(),
        headers: { cookie: this.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      }),
    );
  }

  signIn(email: string, password: string) {
    return this.post('/admin/signin', { email, password });
  }
}
