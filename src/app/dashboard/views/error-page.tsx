// A page that could not be shown: the status, what happened, and a way on.
import { Document } from './layout';

const TITLES: Record<number, string> = {
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  422: 'Not valid',
  429: 'Too many attempts',
  500: 'Something went wrong',
  503: 'Database unavailable',
};

export function ErrorPage(props: { base: string; status: number; message: string; signedIn: boolean }) {
  const title = TITLES[props.status] ?? 'Could not show this page';
  return (
    <Document base={props.base} title={title}>
      <main id="main" class="narrow">
        <p class="brand">toolgate</p>
        <h1>{title}</h1>
        <p role="alert">{props.message}</p>
        <p>
          <a href={`${props.base}${props.signedIn ? '/agents' : '/sign-in'}`}>{props.signedIn ? 'Back to the agents' : 'Go to sign in'}</a>
        </p>
      </main>
    </Document>
  );
}
