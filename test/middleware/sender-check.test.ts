// authenticatedSender(authservId): a sender counts only when the receiving server named by its
// authserv-id vouches for the From; its verdict is kept in the request's state.
import type { RequestHandler } from 'express';
import { authenticatedSender } from '../../middleware/sender-check';
import { throughMiddleware } from '../support/middleware-harness';

const check = authenticatedSender('mx.thescoop.com');
/** A middleware that runs the check over the body, as toolRun() does, and keeps the routing key it gave. */
const decide: RequestHandler = (req, res, next) => {
  res.locals.decided = check(req, req.body.from, req.body.authentication_results);
  next();
};

test('when the named server says dmarc=pass for the From, then the sender counts, and the verdict is kept', async () => {
  const out = await throughMiddleware(decide, {
    body: { from: 'Mara <Mara+billing@TheScoop.com>', authentication_results: ['mx.thescoop.com; dmarc=pass header.from=thescoop.com'] },
  });
  expect(out.state?.senderAuthentication).toMatchObject({ routing_key: 'mara@thescoop.com' });
});

test('when another server vouches, or none does, then the run has no routing key', async () => {
  for (const authentication_results of [['mx.evil.com; dmarc=pass header.from=thescoop.com'], []]) {
    const out = await throughMiddleware(decide, { body: { from: 'mara@thescoop.com', authentication_results } });
    expect(out.state?.senderAuthentication?.routing_key).toBeNull();
  }
});

test('when the authserv-id is not one token, then construction fails with ERR_TOOLGATE_AUTHSERV_ID', () => {
  expect(() => authenticatedSender('mx thescoop; com')).toThrow(expect.objectContaining({ code: 'ERR_TOOLGATE_AUTHSERV_ID' }));
});
