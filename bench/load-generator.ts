// A load generator in a process of its own (autocannon), so the server it drives keeps its event
// loop to itself, as a server's callers are elsewhere. Given one JSON argument: the URL, the
// connections, how many requests, the headers, and how to vary each request (a sender of several,
// a fresh Idempotency-Key). Prints one JSON line: requests a second, p50 and p99 in ms, non-2xx.
import autocannon from 'autocannon';

export interface LoadRequest {
  url: string;
  connections: number;
  amount: number;
  headers: Record<string, string>;
  /** The body's fields; `sender` is set per request from `senders`, in turn, and `input` to {n}. */
  tool: string;
  senders: string[];
  /** Each request gets an Idempotency-Key of its own, starting with this. */
  keyPrefix?: string;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  total: number;
}

async function main(): Promise<void> {
  const given = JSON.parse(process.argv[2]!) as LoadRequest;
  let n = 0;
  const times: number[] = [];
  const started = performance.now();
  // autocannon reports a run given an `amount` only at its next sampling tick (a second by
  // default) after the last answer, so the run's length is read from the last answer instead.
  let lastAnswer = started;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: given.url,
        connections: given.connections,
        amount: given.amount,
        method: 'POST',
        headers: given.headers,
        requests: [
          {
            setupRequest: (req: autocannon.Request) => {
              const i = n++;
              const body = JSON.stringify({ tool: given.tool, input: { n: i }, sender: given.senders[i % given.senders.length] });
              const headers = { ...given.headers, ...(given.keyPrefix ? { 'idempotency-key': `${given.keyPrefix}-${i}` } : {}) };
              return { ...req, body, headers };
            },
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => {
      times.push(ms);
      lastAnswer = performance.now();
    });
  });
  const seconds = (lastAnswer - started) / 1000;
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? Number.NaN;
  const out: LoadResult = {
    rps: result.requests.total / seconds,
    p50: at(0.5),
    p99: at(0.99),
    non2xx: result.non2xx,
    total: result.requests.total,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
