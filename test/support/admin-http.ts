// The admin area over real HTTP with fetch: signs in (CSRF field of the sign-in page, cookies kept), then
// GETs and POSTs forms the way a browser without JavaScript would, taking _csrf and _once from the page.
import assert from 'node:assert/strict';

export interface AdminClient {
  get(path: string): Promise<Response>;
  /** posts the form, with the _csrf and _once fields of `formPage` (default: the path itself) */
  post(path: string, fields: Record<string, string>, formPage?: string): Promise<Response>;
}

/** A browser without a session yet (cookies kept): the sign-in page, an invitation link. */
export function browserClient(base: string): AdminClient {
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const at = pair!.indexOf('=');
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return res;
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const get = async (path: string): Promise<Response> => {
    const res = keep(await fetch(`${base}${path}`, { headers: { cookie: cookie() }, redirect: 'manual' }));
    const location = res.headers.get('location') ?? '';
    // the redirect that gives a creating form its one-time token
    return res.status === 303 && /[?&]form=/.test(location) ? get(location) : res;
  };
  const post = async (path: string, fields: Record<string, string>, formPage = path): Promise<Response> => {
    const html = await (await get(formPage)).text();
    const extra: Record<string, string> = {};
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    const once = /name="_once" value="([^"]+)"/.exec(html)?.[1];
    if (csrf) extra._csrf = csrf;
    if (once) extra._once = once;
    return keep(
      await fetch(`${base}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() },
        body: new URLSearchParams({ ...extra, ...fields }).toString(),
      }),
    );
  };
  return { get, post };
}

export async function signedInAdmin(base: string, email = 'admin@example.com', password = 'correct horse battery'): Promise<AdminClient> {
  const client = browserClient(base);
  const signedIn = await client.post('/admin/signin', { email, password });
  assert.equal(signedIn.status, 303, 'signed in');
  return client;
}
