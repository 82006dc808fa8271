// Sign in: the admin token, once per browser session; it is checked and forgotten, never stored.
import { Document } from './layout';

export function SignInPage(props: { base: string; csrfToken: string; error?: string; next?: string }) {
  return (
    <Document base={props.base} title="Sign in">
      <main id="main" class="narrow">
        <p class="brand">toolgate</p>
        <h1>Sign in to the dashboard</h1>
        <p class="lead">
          Manage toolkits, grants and sender gates. Use the service's admin token (TOOLGATE_ADMIN_TOKEN, or the file .toolgate/admin-token).
        </p>
        {props.error ? (
          <p class="error-summary" role="alert">
            {props.error}
          </p>
        ) : null}
        <form method="post" action={`${props.base}/sign-in`} noValidate>
          <input type="hidden" name="_csrf" value={props.csrfToken} />
          {props.next ? <input type="hidden" name="next" value={props.next} /> : null}
          <div class={`field${props.error ? ' invalid' : ''}`}>
            <label for="token">Admin token</label>
            <input
              id="token"
              name="token"
              type="password"
              autoComplete="current-password"
              required
              autoFocus
              aria-invalid={props.error ? 'true' : undefined}
            />
          </div>
          <button type="submit">Sign in</button>
        </form>
      </main>
    </Document>
  );
}
