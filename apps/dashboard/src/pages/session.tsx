import { useEffect, useRef, useState, type FormEvent } from 'react';
import { SetPasswordBodySchema, SignInBodySchema, SignUpBodySchema, TotpCodeBodySchema } from '../../../../contract/admin';
import { api, errorCode, errorMessage, UNREACHABLE } from '../api';
import { ErrorNote, Loading, PageTitle, type Me } from '../ui';

type OnSignedIn = (account: Me, csrf: string) => void;
type Answer = { status: number; body: unknown };

/**
 * The second step of a sign-in: a code from the account's authenticator app. `send` signs in with
 * it (the first step's credentials again); a wrong code keeps the form, with the API's words.
 */
function TotpStep(props: { send: (code: string) => Promise<Answer>; onSignedIn: OnSignedIn; onCancel?: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    field.current?.focus();
  }, []);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const parsed = TotpCodeBodySchema.safeParse({ code: String(new FormData(e.currentTarget).get('code') ?? '') });
    if (!parsed.success) return setError(parsed.error.issues[0]!.message);
    setBusy(true);
    setError(null);
    try {
      const r = await props.send(parsed.data.code);
      if (r.status === 200) {
        const body = r.body as { account: Me; csrf_token: string };
        return props.onSignedIn(body.account, body.csrf_token);
      }
      setError(errorMessage(r.body));
      if (field.current) {
        field.current.value = '';
        field.current.focus();
      }
    } catch {
      setError(UNREACHABLE);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} noValidate aria-label="Authenticator code">
      <label htmlFor="totp-code">Code from your authenticator app</label>
      <input
        id="totp-code"
        name="code"
        ref={field}
        inputMode="numeric"
        autoComplete="one-time-code"
        pattern="[0-9 ]*"
        maxLength={20}
        aria-describedby="totp-help"
        required
      />
      <p id="totp-help" className="muted">
        This account signs in in two steps: open your authenticator app and enter the 6-digit code it shows for Tollgate console.
      </p>
      <ErrorNote message={error} />
      <div className="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Verify'}
        </button>
        {props.onCancel ? (
          <button type="button" className="secondary" onClick={props.onCancel}>
            Use another account
          </button>
        ) : null}
      </div>
    </form>
  );
}

export function SignInPage(props: { onSignedIn: OnSignedIn }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Email and password, kept while the second step asks for the code (they are sent again with it).
  const [credentials, setCredentials] = useState<{ email: string; password: string } | null>(null);
  // Whether anyone may sign up here (TOLLGATE_CONSOLE_SIGNUP=open), and whether the sign-up form is shown.
  const [signupOpen, setSignupOpen] = useState(false);
  const [signingUp, setSigningUp] = useState(false);
  useEffect(() => {
    void api.session
      .signupMode()
      .then((r) => setSignupOpen(r.status === 200 && r.body.signup_mode === 'open'))
      .catch(() => undefined);
  }, []);
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
      else if (errorCode(r.body) === 'console_totp_required') setCredentials({ email: parsed.data.email, password: parsed.data.password });
      else setError(errorMessage(r.body));
    } catch {
      setError(UNREACHABLE);
    } finally {
      setBusy(false);
    }
  };
  if (credentials) {
    return (
      <section className="narrow">
        <PageTitle>Two-step sign-in</PageTitle>
        <p>{credentials.email}</p>
        <TotpStep send={(code) => api.session.signIn({ body: { ...credentials, code } })} onSignedIn={props.onSignedIn} onCancel={() => setCredentials(null)} />
      </section>
    );
  }
  if (signingUp) return <SignUpForm onSignedIn={props.onSignedIn} onCancel={() => setSigningUp(false)} />;
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
      {signupOpen ? (
        <p>
          New here?{' '}
          <button type="button" className="link" onClick={() => setSigningUp(true)}>
            Create an account
          </button>
        </p>
      ) : (
        <p className="muted">
          No password yet? An operator gets a one-time sign-in link from <code>npm run tollgate -- admin create --email you@example.com</code> in the Tollgate
          folder (or <code>npm run tollgate -- admin link --email you@example.com</code> for an account that exists).
        </p>
      )}
    </section>
  );
}

/** Sign-up, where this deployment lets anyone in (TOLLGATE_CONSOLE_SIGNUP=open): a member account that creates its own projects. */
function SignUpForm(props: { onSignedIn: OnSignedIn; onCancel: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const parsed = SignUpBodySchema.safeParse({ email: String(form.get('email') ?? ''), password: String(form.get('password') ?? '') });
    if (!parsed.success) return setError(parsed.error.issues[0]!.message);
    setBusy(true);
    setError(null);
    try {
      const r = await api.session.signUp({ body: parsed.data });
      if (r.status === 200) props.onSignedIn(r.body.account, r.body.csrf_token);
      else setError(errorMessage(r.body));
    } catch {
      setError(UNREACHABLE);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="narrow">
      <PageTitle>Create an account</PageTitle>
      <form onSubmit={submit} noValidate>
        <label htmlFor="signup-email">Email</label>
        <input id="signup-email" name="email" type="email" autoComplete="username" required />
        <label htmlFor="signup-password">Password</label>
        <input id="signup-password" name="password" type="password" autoComplete="new-password" aria-describedby="signup-rules" required />
        <p id="signup-rules" className="muted">
          8 to 128 characters, with at least one letter and one number.
        </p>
        <ErrorNote message={error} />
        <div className="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Creating…' : 'Create account'}
          </button>
          <button type="button" className="secondary" onClick={props.onCancel}>
            I have an account
          </button>
        </div>
      </form>
      <p className="muted">Your account sees the projects you create, and those you are invited to.</p>
    </section>
  );
}

/**
 * A one-time link's landing page (sign-in link, invitation): the token is in the fragment
 * (#token=...), never sent in a URL; it is taken out of the address bar, redeemed once, and the
 * answer signs the account in or is shown as the API worded it. An account with an authenticator
 * app is asked for a code first (the link is not used up until the code is right).
 */
export function TokenLinkPage(props: {
  title: string;
  /** What the loading state names ("your session", "your invitation"). */
  what: string;
  /** The message when the link carries no token. */
  noToken: string;
  redeem: (token: string, code?: string) => Promise<Answer>;
  onSignedIn: OnSignedIn;
}) {
  const [error, setError] = useState<string | null>(null);
  const [token, setToken] = useState<string | null>(null);
  const [needsCode, setNeedsCode] = useState(false);
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const found = new URLSearchParams(window.location.hash.slice(1)).get('token');
    window.history.replaceState(null, '', window.location.pathname);
    if (!found) return setError(props.noToken);
    setToken(found);
    void props
      .redeem(found)
      .then((r) => {
        if (r.status === 200) {
          const body = r.body as { account: Me; csrf_token: string };
          return props.onSignedIn(body.account, body.csrf_token);
        }
        if (errorCode(r.body) === 'console_totp_required') return setNeedsCode(true);
        setError(errorMessage(r.body));
      })
      .catch(() => setError(UNREACHABLE));
  }, [props]);
  return (
    <section className="narrow">
      <PageTitle>{props.title}</PageTitle>
      {error ? (
        <>
          <ErrorNote message={error} />
          <a href="/dashboard/">Go to the sign-in page</a>
        </>
      ) : needsCode && token ? (
        <TotpStep send={(code) => props.redeem(token, code)} onSignedIn={props.onSignedIn} />
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
      redeem={(token, code) => api.session.redeemLink({ body: { token, code } })}
      onSignedIn={props.onSignedIn}
    />
  );
}

export function AccountPage(props: { me: Me; onChanged: () => void }) {
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
      <h2>Password</h2>
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
      <AuthenticatorApp me={props.me} onChanged={props.onChanged} />
    </section>
  );
}

/** Two-step sign-in: set up an authenticator app (scan, confirm with a first code), or turn it off with a code. */
function AuthenticatorApp(props: { me: Me; onChanged: () => void }) {
  const [setup, setSetup] = useState<{ secret: string; qr_code: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | null>(null);

  const call = async (run: () => Promise<Answer>, after: (r: Answer) => void, form?: HTMLFormElement) => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const r = await run();
      if (r.status === 200) after(r);
      else {
        setError(errorMessage(r.body));
        form?.reset();
      }
    } catch {
      setError(UNREACHABLE);
    } finally {
      setBusy(false);
    }
  };
  const codeOf = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const parsed = TotpCodeBodySchema.safeParse({ code: String(new FormData(e.currentTarget).get('code') ?? '') });
    if (!parsed.success) {
      setError(parsed.error.issues[0]!.message);
      return null;
    }
    return parsed.data.code;
  };

  const start = () =>
    call(
      () => api.session.startTotp(),
      (r) => setSetup(r.body as { secret: string; qr_code: string }),
    );
  const confirm = (e: FormEvent<HTMLFormElement>) => {
    const form = e.currentTarget;
    const code = codeOf(e);
    if (code === null) return;
    void call(
      () => api.session.confirmTotp({ body: { code } }),
      () => {
        setSetup(null);
        setDone('Two-step sign-in is on: every sign-in now asks for a code from your app.');
        props.onChanged();
      },
      form,
    );
  };
  const turnOff = (e: FormEvent<HTMLFormElement>) => {
    const form = e.currentTarget;
    const code = codeOf(e);
    if (code === null) return;
    void call(
      () => api.session.disableTotp({ body: { code } }),
      () => {
        setDone('Two-step sign-in is off: your password alone signs you in.');
        props.onChanged();
      },
      form,
    );
  };

  return (
    <section aria-labelledby="totp-title">
      <h2 id="totp-title">Two-step sign-in</h2>
      {done ? <p role="status">{done}</p> : null}
      {props.me.totp_enabled ? (
        <>
          <p>
            <span className="badge">On</span> Signing in asks for a code from your authenticator app.
          </p>
          <form onSubmit={turnOff} noValidate>
            <label htmlFor="totp-off-code">Current code, to turn it off</label>
            <input id="totp-off-code" name="code" inputMode="numeric" autoComplete="one-time-code" maxLength={20} />
            <ErrorNote message={error} />
            <button type="submit" className="secondary" disabled={busy}>
              Turn off
            </button>
          </form>
        </>
      ) : setup ? (
        <>
          <p>Scan this code with an authenticator app (1Password, Google Authenticator, Authy…), then enter the code it shows.</p>
          <img src={setup.qr_code} alt="QR code of the authenticator app secret" width={200} height={200} />
          <p>
            Cannot scan? Enter this key: <code data-testid="totp-secret">{setup.secret}</code>
          </p>
          <form onSubmit={confirm} noValidate>
            <label htmlFor="totp-setup-code">Code from the app</label>
            <input id="totp-setup-code" name="code" inputMode="numeric" autoComplete="one-time-code" maxLength={20} />
            <ErrorNote message={error} />
            <div className="actions">
              <button type="submit" disabled={busy}>
                Turn on
              </button>
              <button type="button" className="secondary" onClick={() => setSetup(null)}>
                Cancel
              </button>
            </div>
          </form>
        </>
      ) : (
        <>
          <p className="muted">Off: your password alone signs you in. With an authenticator app, a stolen password is not enough.</p>
          <ErrorNote message={error} />
          <button type="button" onClick={() => void start()} disabled={busy}>
            Set up an authenticator app
          </button>
        </>
      )}
    </section>
  );
}
