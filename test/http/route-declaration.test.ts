// mountRoutes serves a declaration with its checks in one order and answers with what the handler
// returns. Plain Express and fake middleware, no database: what each check refuses is the shared
// parsers' (test/http/errors.test.ts), here only that each runs, once, in its place.
import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { z } from 'zod';
import { errorHandler } from '../../middleware/error-handler';
import { ForbiddenError, ValidationError } from '../../src/errors';
import { writeNdjson } from '../../src/http/ndjson';
import { checked, type Parsed } from '../../src/http/parse';
import { mountRoutes, PASS, routeSection, type MountServices } from '../../routes/route';

interface Fakes {
  seen: string[];
  /** The route each Idempotency-Key is scoped to, as the declaration named it. */
  routes?: string[];
}

const body = z.strictObject({ word: z.string().min(1) });

function app(section: Parameters<typeof mountRoutes<Fakes>>[0], fakes: Fakes, mount: MountServices) {
  const a = express();
  a.use(express.json());
  a.use(mountRoutes(section, fakes, mount));
  a.use((_req, res) => res.status(404).json({ code: 'passed_on' }));
  a.use(errorHandler({ renderAll: true }));
  return a;
}

const step =
  (fakes: Fakes, name: string): RequestHandler =>
  (_req, _res, next) => {
    fakes.seen.push(name);
    next();
  };

function declared(fakes: Fakes) {
  const mount: MountServices = {
    requireRole:
      (...roles) =>
      (req, _res, next) => {
        fakes.seen.push(`role:${roles.join('|')}`);
        next(req.headers['x-role'] === 'nobody' ? new ForbiddenError('not you') : undefined);
      },
    idempotencyKey: (routeOf) => (req, _res, next) => {
      fakes.seen.push('idempotency');
      fakes.routes?.push(routeOf(req));
      next();
    },
  };
  const section = routeSection<Fakes>('Test', (route) => [
    route({
      method: 'post',
      path: '/agents/:id/words',
      summary: 'A word',
      roles: ['client'],
      query: z.strictObject({ loud: z.enum(['yes', 'no']).default('no') }),
      body,
      idempotent: true,
      success: { status: 201, description: 'The word' },
      use: (tg) => [step(tg, 'run')],
      handle: (tg, { ids, query, body, req }) => {
        tg.seen.push('handler');
        return { agent: ids.id, word: query.loud === 'yes' ? body.word.toUpperCase() : body.word, sent: req.body };
      },
    }),
    route({
      method: 'delete',
      path: '/agents/:id/words/:wordId',
      summary: 'Forget a word',
      roles: 'anyone',
      success: { status: 204, description: 'Forgotten' },
      handle: () => undefined,
    }),
    route({
      method: 'get',
      path: '/files/:name',
      params: { name: z.string().max(5) },
      summary: 'A file',
      roles: 'anyone',
      success: { status: 200, description: 'The file' },
      handle: (_tg, { params }) => (params.name === 'known' ? { name: params.name } : PASS),
    }),
  ]);
  return { section, mount };
}

describe('when a declared route is called', () => {
  test('then the role, the input checks, the Idempotency-Key, its own middleware and the handler run in that order, once each', async () => {
    const fakes: Fakes = { seen: [] };
    const { section, mount } = declared(fakes);
    const res = await request(app(section, fakes, mount))
      .post('/agents/7/words?loud=yes')
      .send({ word: 'hi' })
      .expect(201);
    expect(res.body).toEqual({ agent: 7, word: 'HI', sent: { word: 'hi' } });
    expect(fakes.seen).toEqual(['role:client', 'idempotency', 'run', 'handler']);
  });

  test('then a refused role stops it before its input is read', async () => {
    const fakes: Fakes = { seen: [] };
    const { section, mount } = declared(fakes);
    await request(app(section, fakes, mount))
      .post('/agents/x/words')
      .set('x-role', 'nobody')
      .send({})
      .expect(403);
    expect(fakes.seen).toEqual(['role:client']);
  });

  test('then a bad id, query or body is a 422 naming where, and nothing after the checks runs', async () => {
    const fakes: Fakes = { seen: [] };
    const { section, mount } = declared(fakes);
    const a = app(section, fakes, mount);
    expect((await request(a).post('/agents/07/words').send({ word: 'hi' }).expect(422)).body.detail[0].loc).toEqual(['path', 'id']);
    expect((await request(a).post('/agents/7/words?loud=maybe').send({ word: 'hi' }).expect(422)).body.detail[0].loc).toEqual([
      'query',
      'loud',
    ]);
    expect((await request(a).post('/agents/7/words').send({ word: '' }).expect(422)).body.detail[0].loc).toEqual(['body', 'word']);
    expect(fakes.seen).toEqual(['role:client', 'role:client', 'role:client']);
  });

  test('then a handler that returns nothing answers the success status with no content', async () => {
    const fakes: Fakes = { seen: [] };
    const { section, mount } = declared(fakes);
    const res = await request(app(section, fakes, mount))
      .delete('/agents/7/words/3')
      .expect(204);
    expect(res.text).toBe('');
  });

  test('then a handler that returns PASS hands the request on, as if the route had not matched', async () => {
    const fakes: Fakes = { seen: [] };
    const { section, mount } = declared(fakes);
    const a = app(section, fakes, mount);
    expect((await request(a).get('/files/known').expect(200)).body).toEqual({ name: 'known' });
    expect((await request(a).get('/files/other').expect(404)).body).toEqual({ code: 'passed_on' });
  });
});

describe('when an idempotent route is reached by several spellings of its path', () => {
  test('then its Idempotency-Key is scoped to the route as declared: method, mount in lower case, pattern, canonical id', async () => {
    const fakes: Fakes = { seen: [], routes: [] };
    const { section, mount } = declared(fakes);
    const a = express();
    a.use(express.json());
    a.use('/api', mountRoutes(section, fakes, mount));
    for (const path of ['/api/agents/7/words', '/api/agents/7/words/', '/API/Agents/7/WORDS', '/api/agents/%37/words'])
      await request(a).post(path).send({ word: 'hi' }).expect(201);
    expect(fakes.routes).toEqual(Array(4).fill('POST /api/agents/7/words'));
  });
});

describe('when a section is mounted without what its routes need', () => {
  test('then mounting fails at once, naming the route, for roles without requireRole and an Idempotency-Key without its middleware', () => {
    const fakes: Fakes = { seen: [] };
    const { section, mount } = declared(fakes);
    expect(() => mountRoutes(section, fakes, {})).toThrow('POST /agents/:id/words has roles: mount it with requireRole.');
    expect(() => mountRoutes(section, fakes, { requireRole: mount.requireRole })).toThrow(
      'POST /agents/:id/words takes an Idempotency-Key: mount it with idempotencyKey.',
    );
  });
});

describe('when a handler answers outside the schema its route declares', () => {
  const counted = routeSection<Fakes>('Test', (route) => [
    route({
      method: 'get',
      path: '/count',
      summary: 'A count',
      roles: 'anyone',
      success: { status: 200, description: 'The count', schema: z.object({ count: z.number().int() }) },
      handle: () => ({ count: 'three' }),
    }),
    route({
      method: 'post',
      path: '/count',
      summary: 'Another count',
      roles: 'anyone',
      success: { status: 201, description: 'The count', schema: z.object({ count: z.number().int() }) },
      also: [{ status: 202, description: 'Counted later', schema: z.object({ later: z.literal(true) }) }],
      handle: (_tg, { res }) => {
        res.status(202).json({ later: 'soon' });
      },
    }),
  ]);

  test('then, under the tests, the answer is held back as a 500 answer_mismatch naming the field, for the success status and for an also status', async () => {
    const fakes: Fakes = { seen: [] };
    const a = app(counted, fakes, {});
    const wrong = await request(a).get('/count').expect(500);
    expect(wrong.body).toMatchObject({ code: 'answer_mismatch', detail: expect.stringContaining('GET /count answered outside') });
    expect(wrong.body.detail).toContain('count:');
    expect((await request(a).post('/count').expect(500)).body).toMatchObject({ code: 'answer_mismatch' });
  });

  test('then, under the tests, an NDJSON answer with a line outside its line schema is cut off, and one within it is sent whole', async () => {
    const lines = (values: unknown[]) =>
      routeSection<Fakes>('Test', (route) => [
        route({
          method: 'get',
          path: '/lines',
          summary: 'Lines',
          roles: 'anyone',
          success: { status: 200, description: 'Lines', schema: z.object({ n: z.number() }), contentType: 'application/x-ndjson' },
          handle: async (_tg, { res }) => {
            res.status(200).set({ 'Content-Type': 'application/x-ndjson' });
            await writeNdjson(
              res,
              (async function* () {
                yield values;
              })(),
            );
          },
        }),
      ]);
    await expect(request(app(lines([{ n: 1 }, { n: 'two' }]), { seen: [] }, {})).get('/lines')).rejects.toThrow();
    expect(
      (
        await request(app(lines([{ n: 1 }, { n: 2 }]), { seen: [] }, {}))
          .get('/lines')
          .expect(200)
      ).text,
    ).toBe('{"n":1}\n{"n":2}\n');
  });

  test('then, with answers not checked, it is sent as the handler gave it', async () => {
    const fakes: Fakes = { seen: [] };
    expect(
      (
        await request(app(counted, fakes, { checkAnswers: false }))
          .get('/count')
          .expect(200)
      ).body,
    ).toEqual({ count: 'three' });
  });
});

describe('when a route hands its parsed body on to a service', () => {
  function handedOn(parses: { count: number }) {
    const counted = z.strictObject({ word: z.string().transform((w) => (parses.count++, w.toUpperCase())) });
    const service = (given: z.input<typeof counted> | Parsed<typeof counted>) => {
      const input = checked(counted, given);
      if (input.word === 'NO') throw new ValidationError([{ loc: ['word'], msg: 'not that word', type: 'refused' }], false);
      return input;
    };
    const section = routeSection<Fakes>('Test', (route) => [
      route({
        method: 'post',
        path: '/words',
        summary: 'A word',
        roles: 'anyone',
        body: counted,
        success: { status: 201, description: 'The word' },
        handle: (_tg, { body }) => service(body),
      }),
    ]);
    return { section, service };
  }

  test('then the service takes it as it stands, parsed once, and parses what code gives it itself', async () => {
    const parses = { count: 0 };
    const { section, service } = handedOn(parses);
    expect(
      (
        await request(app(section, { seen: [] }, {}))
          .post('/words')
          .send({ word: 'hi' })
          .expect(201)
      ).body,
    ).toEqual({ word: 'HI' });
    expect(parses.count).toBe(1);
    expect(service({ word: 'hey' })).toEqual({ word: 'HEY' });
    expect(parses.count).toBe(2);
  });

  test('then what the service refuses of it is located under body, while from code it says where in the value', async () => {
    const { section, service } = handedOn({ count: 0 });
    const res = await request(app(section, { seen: [] }, {}))
      .post('/words')
      .send({ word: 'no' })
      .expect(422);
    expect(res.body.detail).toEqual([{ loc: ['body', 'word'], msg: 'not that word', type: 'refused' }]);
    expect(() => service({ word: 'no' })).toThrow(
      expect.objectContaining({ located: false, issues: [expect.objectContaining({ loc: ['word'] })] }),
    );
  });
});
