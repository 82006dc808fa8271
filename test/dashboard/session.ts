// A dashboard visitor over supertest: keeps its cookies by hand, as a browser would (they are
// Secure, and the tests speak plain HTTP on loopback, as a browser on the same machine does), and
// reads each page's CSRF token.
import type { Express } from 'express';
import request from 'supertest';
import { ADMIN_TOKEN } from '../support/app';

export interface Visitor {
  /** Every cookie the visitor holds, as its Cookie header (null while it holds none). */
  cookie: string | null;
  get(path: string, headers?: Record<string, string>): Promise<request.Response>;
  post(path: string, form: Record<string, string | string[]>, headers?: Record<string, string>): Promise<request.Response>;
  /** The CSRF token of the page at `path`. */
  token(path: string): Promise<string>;
}

export function visitor(app: Express): Visitor {
  const v: Visitor = {
    cookie: null,
    async get(path, headers = {}) {
      return keep(await request(app).get(path).set(withCookie(headers)));
    },
    async post(path, form, headers = {}) {
      const body = new URLSearchParams();
      for (const [k, value] of Object.entries(form)) for (const one of Array.isArray(value) ? value : [value]) body.append(k, one);
      return keep(await request(app).post(path).set(withCookie(headers)).type('form').send(body.toString()));
    },
    async token(path) {
      const page = await v.get(path);
      const token = /name="_csrf" value="([0-9a-f.]+)"/.exec(page.text)?.[1];
      if (!token) throw new Error(`no CSRF token on ${path} (status ${page.status})`);
      return token;
    },
  };
  const jar = new Map<string, string>();
  const withCookie = (headers: Record<string, string>) => (v.cookie ? { ...headers, cookie: v.cookie } : headers);
  const keep = (res: request.Response) => {
    const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    for (const line of set) {
      const pair = line.split(';')[0]!;
      const name = pair.slice(0, pair.indexOf('='));
      const value = pair.slice(pair.indexOf('=') + 1);
      // A cleared cookie comes back empty and already expired: a browser drops it.
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    v.cookie = jar.size > 0 ? [...jar].map(([name, value]) => `${name}=${value}`).join('; ') : null;
    return res;
  };
  return v;
}

export async function signedIn(app: Express, token = ADMIN_TOKEN): Promise<Visitor> {
  const v = visitor(app);
  const res = await v.post('/admin/sign-in', { _csrf: await v.token('/admin/sign-in'), token });
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
  return v;
}
