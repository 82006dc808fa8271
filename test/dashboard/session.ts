// A dashboard visitor over supertest: keeps the session cookie by hand (the cookie is Secure, and
// the tests speak plain HTTP on loopback, as a browser on the same machine does) and reads each
// page's CSRF token.
import type { Express } from 'express';
import request from 'supertest';
import { ADMIN_TOKEN } from '../support/app';

export interface Visitor {
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
      const token = /name="_csrf" value="([0-9a-f]+)"/.exec(page.text)?.[1];
      if (!token) throw new Error(`no CSRF token on ${path} (status ${page.status})`);
      return token;
    },
  };
  const withCookie = (headers: Record<string, string>) => (v.cookie ? { ...headers, cookie: v.cookie } : headers);
  const keep = (res: request.Response) => {
    const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    for (const line of set) v.cookie = line.split(';')[0]!;
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
