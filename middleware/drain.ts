// Draining (SEMANTICS §13): on shutdown, toolgate's router stops taking requests (503
// shutting_down, so a load balancer retries elsewhere) and waits, within a bound, for the ones it is
// serving, so a run in flight ends and is recorded rather than cut off mid-tool.
import type { RequestHandler } from 'express';
import { ShuttingDownError } from '../src/errors';

export class Drain {
  #inFlight = 0;
  #draining = false;
  #idle: (() => void)[] = [];

  /** Counts each request the router serves; refuses new ones once draining. */
  readonly middleware: RequestHandler = (_req, res, next) => {
    if (this.#draining) {
      res.set('Connection', 'close');
      return next(new ShuttingDownError());
    }
    this.#inFlight += 1;
    res.once('close', () => this.#done());
    next();
  };

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Stops taking requests and waits for those in flight, at most `timeoutMs`: how many were left. */
  async drain(timeoutMs: number): Promise<{ drained: boolean; left: number }> {
    this.#draining = true;
    if (this.#inFlight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.#idle.push(resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
      ]);
      clearTimeout(timer);
    }
    return { drained: this.#inFlight === 0, left: this.#inFlight };
  }

  #done(): void {
    this.#inFlight -= 1;
    if (this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }
}
