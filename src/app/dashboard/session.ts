// Dashboard sessions: server-side, in PostgreSQL (connect-pg-simple over the toolgate's own
// Sequelize, so they survive restarts, every instance shares them, and the query timeouts apply),
// behind a Secure, HttpOnly, SameSite=Strict cookie.
import { createHmac } from 'node:crypto';
import connectPgSimple from 'connect-pg-simple';
import session from 'express-session';
import type { RequestHandler } from 'express';
import type { Pool } from 'pg';
import { QueryTypes, type Sequelize } from 'sequelize';

/** The session's life without activity: each request extends it. */
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
export const SESSION_COOKIE = '__Host-toolgate-admin';

declare module 'express-session' {
  interface SessionData {
    /** Set once the admin token was presented. */
    signedIn?: boolean;
    /** One message for the next page ("Toolkit Finance created."). */
    flash?: string;
  }
}

export interface DashboardSession {
  middleware: RequestHandler;
  /** Deletes expired sessions; run now and then (each sign-in does). */
  prune(): Promise<void>;
}

export function dashboardSession(sequelize: Sequelize, adminToken: string): DashboardSession {
  const PgStore = connectPgSimple(session);
  const store = new PgStore({
    // connect-pg-simple needs only query(text, params) → {rows}: this one runs on Sequelize's pool.
    pool: sequelizePool(sequelize),
    tableName: 'admin_sessions',
    pruneSessionInterval: false,
  });
  const middleware = session({
    name: SESSION_COOKIE,
    // Derived from the admin token: every instance agrees without another setting, and a new admin
    // token signs every dashboard session out.
    secret: createHmac('sha256', adminToken).update('toolgate dashboard session cookie').digest('hex'),
    store,
    proxy: true,
    resave: false,
    saveUninitialized: false,
    rolling: true,
    unset: 'destroy',
    cookie: { httpOnly: true, secure: true, sameSite: 'strict', path: '/', maxAge: SESSION_IDLE_MS },
  });
  return {
    middleware,
    prune: () =>
      new Promise<void>((resolve) => {
        store.pruneSessions(() => resolve());
      }),
  };
}

function sequelizePool(sequelize: Sequelize): Pool {
  const pool = {
    query: async (text: string, params: unknown[] = []) => ({
      rows: await sequelize.query(text, { bind: params, type: QueryTypes.SELECT }),
    }),
  };
  // The store calls query() and nothing else on its pool.
  return pool as unknown as Pool;
}
