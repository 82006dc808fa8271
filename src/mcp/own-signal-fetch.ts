// fetch for the SDK's Streamable HTTP client, each request on an abort signal of its own. The
// client passes one signal to every request, and fetch adds a listener to it per request that goes
// only when the request is collected: past 1,500 calls on a connection Node warns of a leak, at
// every call. Here each request listens on the shared signal only until its answer's body ends (a
// stream's, when the stream does), so closing the client still aborts what is in flight.
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

export const ownSignalFetch: FetchLike = async (url, init) => {
  const shared = init?.signal;
  if (!shared) return fetch(url, init);
  const own = new AbortController();
  const abort = () => own.abort(shared.reason);
  if (shared.aborted) own.abort(shared.reason);
  else shared.addEventListener('abort', abort, { once: true });
  const release = () => shared.removeEventListener('abort', abort);
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: own.signal });
  } catch (err) {
    release();
    throw err;
  }
  if (response.body === null) {
    release();
    return response;
  }
  // The body passed through as it comes: when it ends, fails or is cancelled, the listener goes.
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  response.body.pipeTo(writable).then(release, release);
  return new Response(readable, { status: response.status, statusText: response.statusText, headers: response.headers });
};
