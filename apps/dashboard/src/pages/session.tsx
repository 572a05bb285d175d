import { useEffect, useRef, useState, type FormEvent } from 'react';
import { SetPasswordBodySchema, SignInBodySchema } from '../../../../contract/admin';
import { api, errorMessage } from '../api';
import { ErrorNote, Loading, PageTitle, type Me } from '../ui';

type OnSignedIn = (account: Me, csrf: string) => void;

export function SignInPage(props: { onSignedIn: OnSignedIn }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const parsed = SignInBodySchema.safeParse({ email: String(form.get('email') ?? ''), password: String(form.get('password') ?? '') });
    if (!parsed.success) return setError(parsed.error.issues[0]!.message);
    setBusy(true);
    setError(null);
    try {
      const r = await api.session.signIn({ body: parsed.data });
      if (r.status === 200) props.onSignedIn(r.body.account, r.body.csrf_token);
      else setError(errorMessage(r.body));
    } catch {
      setError('The server cannot be reached.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="narrow">
      <PageTitle>Sign in</PageTitle>
      <form onSubmit={submit} noValidate>
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required />
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p className="muted">
        No password yet? An operator gets a one-time sign-in link from <code>tollgate admin create --email you@example.com</code> (or{' '}
        <code>tollgate admin link</code>).
      </p>
    </section>
  );
}

type Redeemed = { status: number; body: unknown };

/**
 * A one-time link's landing page (sign-in link, invitation): the token is in the fragment
 * (#token=...), never sent in a URL; it is taken out of the address bar, redeemed once, and the
 * answer signs the account in or is shown as the API worded it.
 */
export function TokenLinkPage(props: {
  title: string;
  /** What the loading state names ("your session", "your invitation"). */
  what: string;
  /** The message when the link carries no token. */
  noToken: string;
  redeem: (token: string) => Promise<Redeemed>;
  onSignedIn: OnSignedIn;
}) {
  const [error, setError] = useState<string | null>(null);
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const token = new URLSearchParams(window.location.hash.slice(1)).get('token');
    window.history.replaceState(null, '', window.location.pathname);
    if (!token) return setError(props.noToken);
    void props
      .redeem(token)
      .then((r) => {
        if (r.status !== 200) return setError(errorMessage(r.body));
        const body = r.body as { account: Me; csrf_token: string };
        props.onSignedIn(body.account, body.csrf_token);
      })
      .catch(() => setError('The server cannot be reached.'));
  }, [props]);
  return (
    <section className="narrow">
      <PageTitle>{props.title}</PageTitle>
      {error ? (
        <>
          <ErrorNote message={error} />
          <a href="/dashboard/">Go to the sign-in page</a>
        </>
      ) : (
        <Loading what={props.what} />
      )}
    </section>
  );
}

export function LinkPage(props: { onSignedIn: OnSignedIn }) {
  return (
    <TokenLinkPage
      title="Signing in"
      what="your session"
      noToken="This sign-in link has no token."
      redeem={(token) => api.session.redeemLink({ body: { token } })}
      onSignedIn={props.onSignedIn}
    />
  );
}

export function AccountPage(props: { me: Me }) {
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setSaved(false);
    const form = e.currentTarget;
    const parsed = SetPasswordBodySchema.safeParse({ password: String(new FormData(form).get('password') ?? '') });
    if (!parsed.success) return setError(parsed.error.issues[0]!.message);
    setError(null);
    const r = await api.session.setPassword({ body: parsed.data });
    if (r.status === 200) {
      setSaved(true);
      form.reset();
    } else setError(errorMessage(r.body));
  };
  return (
    <section className="narrow">
      <PageTitle>Account</PageTitle>
      <p>
        {props.me.email} · <span className="badge">{props.me.role}</span>
      </p>
      <form onSubmit={submit} noValidate>
        <label htmlFor="new-password">New password</label>
        <input id="new-password" name="password" type="password" autoComplete="new-password" aria-describedby="password-rules" />
        <p id="password-rules" className="muted">
          8 to 128 characters, with at least one letter and one number.
        </p>
        <ErrorNote message={error} />
        {saved ? <p role="status">Password saved.</p> : null}
        <button type="submit">Set password</button>
      </form>
    </section>
  );
}
