// Writes an answer as newline-delimited JSON, a batch at a time, waiting for the client to take each
// before the next is read: one batch in memory, however long the answer, and a reader who stops
// reading stops the reading. An answer whose source fails midway is cut off (the connection
// dropped), never ended as if it were complete. JSON.stringify escapes every newline in a value, so
// one record is one line, whatever its text holds.
import type { ServerResponse } from 'node:http';

export const NDJSON = 'application/x-ndjson; charset=utf-8';

export async function writeNdjson(res: ServerResponse, batches: AsyncIterable<readonly unknown[]>): Promise<void> {
  try {
    for await (const batch of batches) {
      if (res.destroyed) return;
      if (batch.length === 0) continue;
      if (!res.write(batch.map((value) => `${JSON.stringify(value)}\n`).join(''))) await drained(res);
    }
    res.end();
  } catch {
    res.destroy();
  }
}

/** Resolves once the client took what was written, or went away. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
