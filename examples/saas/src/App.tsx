import { useEffect, useState, type FormEvent } from 'react';
import {
  isTollgateError,
  OrganizationProfile,
  OrganizationSwitcher,
  PasskeyButton,
  PricingTable,
  Protect,
  SeatsManager,
  UsageBar,
  useEntitlements,
  useOrganization,
  useOrganizationList,
  usePasskeys,
  useTollgate,
  useUsage,
  useUser,
  formatMoney,
  type BrowserSession,
  type Invoice,
  type MfaChallenge,
  type MyOrganization,
} from '@tollgate/react';

export function App() {
  const { isLoaded, isSignedIn, user, signOut } = useUser();
  if (!isLoaded) return <p>Loading…</p>;
  if (!isSignedIn || !user) return <SignIn />;
  return (
    <main>
      <header className="bar">
        <strong>Acme Reports</strong>
        <span>
          Signed in as <span data-testid="email">{user.email}</span>{' '}
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </span>
      </header>
      <section aria-labelledby="plans-title">
        <h2 id="plans-title">Plans</h2>
        <PricingTable />
      </section>
      <section aria-labelledby="report-title">
        <h2 id="report-title">Pro report</h2>
        <Protect
          plan="pro"
          fallback={<p data-testid="report-locked">The report is for the Pro plan and above: pick one in the table.</p>}
          loading={<p>Loading…</p>}
        >
          <Report />
        </Protect>
      </section>
      <GenerateReports />
      <SubscriptionPanel />
      <Passkeys />
      <Teams />
      <WebhookEvents />
    </main>
  );
}

/** What the sign-in page's passkey autofill keeps to itself. */
const AUTOFILL_QUIET: string[] = ['passkey_aborted', 'passkey_cancelled', 'passkeys_unsupported', 'passkeys_disabled', 'passkey_not_configured'];

/** What the MFA step's passkey button keeps to itself: the user dismissed the browser's dialog, or another ceremony stopped it. */
const DIALOG_QUIET: string[] = ['passkey_cancelled', 'passkey_aborted'];

/** A sign-in answers a session, or an MFA challenge (the project's MFA policy): its second step then replaces the form. */
function SignIn() {
  const [challenge, setChallenge] = useState<MfaChallenge | null>(null);
  return (
    <main>
      <h1>Acme Reports</h1>
      {challenge ? <MfaStep challenge={challenge} onBack={() => setChallenge(null)} /> : <SignInForm onMfa={setChallenge} />}
    </main>
  );
}

function SignInForm({ onMfa }: { onMfa(challenge: MfaChallenge): void }) {
  const { signIn, signUp } = useUser();
  const tollgate = useTollgate();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // A session shows the signed-in page by itself; a challenge asks for the second step.
  const signedIn = (answer: BrowserSession | MfaChallenge) => 'mfa_required' in answer && onMfa(answer);

  // The browser offers the site's passkeys in the email field's autofill (autocomplete "... webauthn")
  // while this form shows; the passkey button below stops that request and opens the browser's dialog instead.
  useEffect(() => {
    const stop = new AbortController();
    void tollgate.passkeys
      .autofillSupported()
      .then((supported) => (supported ? tollgate.passkeys.signIn({ autofill: true, signal: stop.signal }) : null))
      .then((answer) => answer && 'mfa_required' in answer && onMfa(answer))
      // Stopped (by the button or by leaving the form), dismissed, or passkeys off: nothing to say.
      .catch((e: unknown) => isTollgateError(e) && !AUTOFILL_QUIET.includes(e.code) && setError(e.message));
    return () => stop.abort();
  }, [tollgate, onMfa]);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    const form = new FormData(event.currentTarget);
    const email = String(form.get('email'));
    const password = String(form.get('password'));
    setBusy(true);
    setError(null);
    try {
      const answer =
        submitter?.value === 'signup' ? await signUp({ email, password, name: String(form.get('name') || '') || null }) : await signIn({ email, password });
      signedIn(answer);
    } catch (e) {
      setError(isTollgateError(e) ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card" onSubmit={(e) => void submit(e)} aria-labelledby="signin-title">
      <h2 id="signin-title">Sign up or sign in</h2>
      <label>
        Name <input name="name" autoComplete="name" />
      </label>
      <label>
        Email <input name="email" type="email" autoComplete="username webauthn" required />
      </label>
      <label>
        Password <input name="password" type="password" autoComplete="current-password" required minLength={8} />
      </label>
      {error && <p role="alert">{error}</p>}
      <div className="actions">
        <button type="submit" name="action" value="signup" disabled={busy}>
          Sign up
        </button>
        <button type="submit" name="action" value="signin" disabled={busy}>
          Sign in
        </button>
      </div>
      {/* Any passkey the browser holds for this site (discoverable): no email needed. */}
      <PasskeyButton mode="sign-in" onSignedIn={signedIn} />
    </form>
  );
}

/**
 * The second step of a sign-in under the project's MFA policy, with the methods the challenge
 * lists: a passkey (the browser's dialog, any of the user's passkeys) or the authenticator app's
 * code. `verifyMfa` answers the session, held like a sign-in's: the signed-in page follows.
 */
function MfaStep({ challenge, onBack }: { challenge: MfaChallenge; onBack(): void }) {
  const tollgate = useTollgate();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const verify = async (run: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (e) {
      // Dismissing the browser's dialog says nothing; Tollgate's refusals (a wrong code, an expired challenge) show.
      if (!isTollgateError(e) || !DIALOG_QUIET.includes(e.code)) setError(isTollgateError(e) ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const code = String(new FormData(event.currentTarget).get('code') ?? '').trim();
    void verify(() => tollgate.verifyMfa({ challenge: challenge.challenge, method: 'totp', code }));
  };
  const passkey = challenge.methods.includes('passkey');
  const totp = challenge.methods.includes('totp');
  return (
    <section className="card" data-testid="mfa" aria-labelledby="mfa-title">
      <h2 id="mfa-title">Confirm it's you</h2>
      {passkey || totp ? (
        <p>Your account asks for a second step.</p>
      ) : (
        // Setting up a first factor (enrollment_required), SMS codes and backup codes: docs/mfa.md.
        <p role="alert">
          This example does not show {challenge.enrollment_required ? 'setting up a second factor' : `the ${challenge.methods.join(' or ')} step`}.
        </p>
      )}
      {passkey && (
        <button type="button" disabled={busy} onClick={() => void verify(() => tollgate.verifyMfa({ challenge: challenge.challenge, method: 'passkey' }))}>
          Use a passkey
        </button>
      )}
      {totp && (
        <form onSubmit={submit}>
          <label>
            Code from your authenticator app <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required />
          </label>
          <button type="submit" disabled={busy}>
            Verify
          </button>
        </form>
      )}
      {error && <p role="alert">{error}</p>}
      <button type="button" onClick={onBack}>
        Back to sign in
      </button>
    </section>
  );
}

/** Content the server serves only to Pro (or above): requireEntitlement({ plan: 'pro' }) on /api/report. */
function Report() {
  const tollgate = useTollgate();
  const { entitlements } = useEntitlements();
  const [report, setReport] = useState<{ title: string; rows: Array<{ region: string; revenue: number }> } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    tollgate
      .fetch('/api/report')
      .then(async (res) => {
        const body = await res.json();
        if (!live) return;
        if (res.ok) setReport(body);
        else setError(body.error);
      })
      .catch((e: unknown) => live && setError(String(e)));
    return () => {
      live = false;
    };
  }, [tollgate, entitlements?.plan]);
  if (error) return <p role="alert">{error}</p>;
  if (!report) return <p>Loading the report…</p>;
  return (
    <table data-testid="report">
      <caption>{report.title}</caption>
      <thead>
        <tr>
          <th scope="col">Region</th>
          <th scope="col">Revenue</th>
        </tr>
      </thead>
      <tbody>
        {report.rows.map((row) => (
          <tr key={row.region}>
            <td>{row.region}</td>
            <td>${row.revenue.toLocaleString('en-US')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * A metered feature: the plans include so many reports a billing period (Basic 3, a hard limit; Pro
 * 100, then billed; Team 1,000, then allowed). "Generate report" asks the server, which consumes one
 * with usage.consume (atomic: the last report of the limit cannot be generated twice) or answers its
 * refusal at the hard limit; <UsageBar> shows the reports used of those included, filling up.
 */
function GenerateReports() {
  const tollgate = useTollgate();
  const { usage, loading, refresh } = useUsage('reports');
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  async function generate() {
    setBusy(true);
    try {
      const res = await tollgate.fetch('/api/reports/generate', { method: 'POST' });
      const body = await res.json();
      setResult(res.ok ? { ok: true, text: `Report generated (${body.used.toLocaleString('en-US')} this period).` } : { ok: false, text: body.error });
      await refresh();
    } catch (e) {
      setResult({ ok: false, text: isTollgateError(e) ? e.message : String(e) });
    } finally {
      setBusy(false);
    }
  }
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Reports generated</h2>
      <UsageBar feature="reports" />
      {!loading && !usage && <p data-testid="usage-none">Your plan includes no reports yet: pick a plan in the table.</p>}
      <button type="button" disabled={busy} onClick={() => void generate()}>
        Generate report
      </button>
      {result && (
        <p role={result.ok ? 'status' : 'alert'} data-testid="generate-result">
          {result.text}
        </p>
      )}
    </section>
  );
}

/**
 * The subscription of the active context: the team's while a team is active (its members are
 * entitled to its plan; those with org:billing:manage may cancel it), else the user's own.
 */
function SubscriptionPanel() {
  const tollgate = useTollgate();
  const { entitlements, organizationId, has } = useEntitlements();
  const target = organizationId ? 'organization' : 'user';
  const [ends, setEnds] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!entitlements) return setEnds(null);
    void tollgate.subscription({ for: target }).then((s) => setEnds(s?.cancelAtPeriodEnd ? s.currentPeriodEnd : null));
  }, [tollgate, entitlements, target]);
  if (!entitlements) return null;
  const act = (run: () => Promise<unknown>) => () => void run().catch((e: unknown) => setError(isTollgateError(e) ? e.message : String(e)));
  const manages = target === 'user' || has({ permission: 'org:billing:manage' });
  return (
    <section aria-labelledby="subscription-title">
      <h2 id="subscription-title">{target === 'user' ? 'Your subscription' : "Your team's subscription"}</h2>
      <p data-testid="subscription">
        {entitlements.plan} ({entitlements.status.replace('_', ' ')})
        {ends ? `, ends on ${new Date(ends).toLocaleDateString('en-US', { dateStyle: 'long' })}` : ''}
      </p>
      {error && <p role="alert">{error}</p>}
      {manages &&
        (ends ? (
          <button type="button" onClick={act(() => tollgate.resume({ for: target }))}>
            Keep {target === 'user' ? 'my' : 'the'} subscription
          </button>
        ) : (
          <button type="button" onClick={act(() => tollgate.cancel({ for: target }))}>
            Cancel subscription
          </button>
        ))}
    </section>
  );
}

/**
 * The user's passkeys: <PasskeyButton mode="register"> runs the browser's dialog and Tollgate stores
 * the new passkey; usePasskeys() lists them and removes one (Tollgate refuses to remove the last way
 * to sign in of an account without a password).
 */
function Passkeys() {
  const { isSupported, isLoaded, passkeys, remove, reload } = usePasskeys();
  const [error, setError] = useState<string | null>(null);
  if (!isSupported) return null;
  const removing = (id: string) => () =>
    void remove(id).then(
      () => setError(null),
      (e: unknown) => setError(isTollgateError(e) ? e.message : String(e)),
    );
  return (
    <section aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <PasskeyButton mode="register" onRegistered={() => void reload()} />
      {!isLoaded ? (
        <p>Loading…</p>
      ) : passkeys.length === 0 ? (
        <p data-testid="no-passkeys">No passkeys yet: add one to sign in without your password.</p>
      ) : (
        <ul data-testid="passkeys">
          {passkeys.map((p) => (
            <li key={p.id}>
              <span className="passkey-name">{p.name}</span> (added {new Date(p.created_at).toLocaleDateString('en-US', { dateStyle: 'medium' })}
              {p.last_used_at ? `, last used ${new Date(p.last_used_at).toLocaleDateString('en-US', { dateStyle: 'medium' })}` : ', never used'}){' '}
              <button type="button" aria-label={`Remove ${p.name}`} onClick={removing(p.id)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {error && <p role="alert">{error}</p>}
    </section>
  );
}

/** What the server received at /webhooks/tollgate and verified, for this user. */
function WebhookEvents() {
  const tollgate = useTollgate();
  const [events, setEvents] = useState<Array<{ id: string; type: string; verified: boolean }>>([]);
  useEffect(() => {
    let live = true;
    const load = () =>
      tollgate
        .fetch('/api/events')
        .then((res) => res.json())
        .then((body: { events: typeof events }) => live && setEvents(body.events))
        .catch(() => undefined);
    void load();
    const timer = setInterval(load, 1000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [tollgate]);
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Webhooks received</h2>
      {events.length === 0 ? (
        <p>None yet.</p>
      ) : (
        <ul data-testid="events">
          {events.map((e) => (
            <li key={e.id}>
              {e.type} {e.verified ? '(signature verified)' : ''}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/**
 * Teams (Tollgate's organizations): the switcher creates one and changes the active one (a new
 * access token that names it), the invitation link of the email lands here with
 * ?tollgate_invitation=..., the server reads the active team from the verified token, and the
 * profile lists the members, with invitations and settings for those whose role allows them.
 */
function Teams() {
  const { active } = useOrganization();
  return (
    <section aria-labelledby="teams-title">
      <h2 id="teams-title">Teams</h2>
      <InvitationLanding />
      <div className="team-bar">
        <OrganizationSwitcher />
        <TeamOnServer />
      </div>
      {active && (
        <>
          <Protect
            permission="org:members:manage"
            fallback={<p data-testid="team-note">You are a member of this team: its admins and owners invite people.</p>}
          >
            <p data-testid="team-note">You manage this team: invite colleagues by email below.</p>
          </Protect>
          <TeamPlan />
          <OrganizationProfile />
        </>
      )}
    </section>
  );
}

/**
 * The team's plan. Every member is entitled to it: while the team is active, useEntitlements() and
 * <Protect plan> read the team's entitlements (the Pro report above opens for a team on Team).
 * Those whose role has org:billing:manage (owners and admins) buy or change it with the pricing
 * table for="organization": the plans sold to teams, the sandbox's hosted checkout paid for the team.
 * Team is priced per seat ($60 a month covers 3 seats, $8 per further seat): the table shows the terms
 * and what the team's members come to; <SeatsManager> shows the seats used of those paid for (and, on
 * a plan whose seats are bought, buys more with a preview of the prorated charge). The seats follow the
 * members and pending invitations, moved by Tollgate in the background, so the team's entitlements
 * (which carry the seats) are read again every few seconds while this shows.
 */
function TeamPlan() {
  const { active } = useOrganization();
  const { isLoaded, entitlements, organizationId, refresh } = useEntitlements();
  const plan = active && organizationId === active.id ? entitlements : null;
  useEffect(() => {
    const timer = setInterval(() => void refresh().catch(() => undefined), 2000);
    return () => clearInterval(timer);
  }, [refresh]);
  return (
    <section className="team-plan" aria-labelledby="team-plan-title">
      <h3 id="team-plan-title">Team plan</h3>
      <p data-testid="team-plan">
        {!isLoaded ? 'Loading…' : plan ? `The team is on ${plan.plan} (${plan.status.replace('_', ' ')}).` : 'The team has no plan yet.'}
      </p>
      <SeatsManager />
      <Protect permission="org:billing:manage" fallback={<p data-testid="team-billing-note">The team's owners and admins choose its plan.</p>}>
        <PricingTable for="organization" />
        <TeamInvoices />
      </Protect>
    </section>
  );
}

/** The team's recent invoices with their lines: a seat added mid-period shows as its prorated charge. */
function TeamInvoices() {
  const tollgate = useTollgate();
  const { entitlements, organizationId } = useEntitlements();
  const [invoices, setInvoices] = useState<Invoice[] | null>(null);
  // Read with the entitlements (every few seconds while the team's plan shows): a renewal or a seat's charge lands on its own time.
  useEffect(() => {
    if (!organizationId) return setInvoices(null);
    let live = true;
    tollgate.invoices({ for: 'organization', limit: 5 }).then(
      (list) => live && setInvoices(list),
      () => live && setInvoices(null),
    );
    return () => {
      live = false;
    };
  }, [tollgate, organizationId, entitlements]);
  if (!invoices || invoices.length === 0) return null;
  const money = (invoice: Invoice, amount: number) => formatMoney(amount, invoice.currency, 'en-US');
  return (
    <div className="team-invoices">
      <h4>Team invoices</h4>
      <ul data-testid="team-invoices">
        {invoices.map((invoice) => (
          <li key={invoice.id}>
            <span className="invoice-total">
              {new Date(invoice.createdAt).toLocaleDateString('en-US', { dateStyle: 'medium' })}: {money(invoice, invoice.amountDue)} ({invoice.status})
            </span>
            <ul>
              {invoice.lines.map((line, i) => (
                <li key={i} className="invoice-line">
                  {line.description}
                  {line.proration ? ' (prorated)' : ''}: {money(invoice, line.amount)}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** What the server makes of the token: GET /api/team answers req.organization and req.tollgate.has({ permission }). */
function TeamOnServer() {
  const tollgate = useTollgate();
  const { active } = useOrganization();
  const [seen, setSeen] = useState<{ organization: { slug: string; role: string } | null; canInvite: boolean } | null>(null);
  useEffect(() => {
    let live = true;
    tollgate
      .fetch('/api/team')
      .then((res) => res.json())
      .then((body) => live && setSeen(body))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [tollgate, active?.id, active?.role]);
  if (!seen) return null;
  return (
    <p data-testid="team-server">
      {seen.organization
        ? `The server sees team ${seen.organization.slug}, role ${seen.organization.role}${seen.canInvite ? ', may invite' : ''}`
        : 'The server sees no team'}
    </p>
  );
}

/** The invitation email's link: <callback>?tollgate_invitation=<token>. The signed-in invitee verifies their address if needed, then accepts. */
function InvitationLanding() {
  const { user } = useUser();
  const { acceptInvitation } = useOrganizationList();
  const [token] = useState(() => new URLSearchParams(window.location.search).get('tollgate_invitation'));
  const [joined, setJoined] = useState<MyOrganization | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (joined) {
    return (
      <p role="status" data-testid="joined">
        You joined {joined.name}: pick it in the switcher to work in it.
      </p>
    );
  }
  if (!token || !user) return null;

  async function accept() {
    setBusy(true);
    setError(null);
    try {
      setJoined(await acceptInvitation({ token: token! }));
      window.history.replaceState(null, '', '/');
    } catch (e) {
      setError(isTollgateError(e) ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="card" data-testid="invitation">
      <p>You have been invited to join a team.</p>
      {user.email_verified ? (
        <button type="button" disabled={busy} onClick={() => void accept()}>
          Accept invitation
        </button>
      ) : (
        <VerifyEmail />
      )}
      {error && <p role="alert">{error}</p>}
    </div>
  );
}

/** An invitation is for a verified address: the 6-digit code Tollgate emailed at sign-up (or a new one). */
function VerifyEmail() {
  const tollgate = useTollgate();
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (run: () => Promise<unknown>, done?: string) => {
    setBusy(true);
    setMessage(null);
    try {
      await run();
      if (done) setMessage(done);
    } catch (e) {
      setMessage(isTollgateError(e) ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const code = String(new FormData(event.currentTarget).get('code') ?? '').trim();
    void act(() => tollgate.verifyEmail(code));
  };
  return (
    <form onSubmit={submit} aria-labelledby="verify-title">
      <p id="verify-title">First verify your email address with the code we sent you when you signed up.</p>
      <label>
        Verification code <input name="code" inputMode="numeric" autoComplete="one-time-code" required />
      </label>
      <div className="actions">
        <button type="submit" disabled={busy}>
          Verify
        </button>
        <button type="button" disabled={busy} onClick={() => void act(() => tollgate.resendVerification(), 'A new code is on its way.')}>
          Send a new code
        </button>
      </div>
      {message && <p role="status">{message}</p>}
    </form>
  );
}
