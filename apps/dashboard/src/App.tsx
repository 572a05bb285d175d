import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { api, errorMessage, setCsrfToken, UNREACHABLE } from './api';
import { AccountPage, LinkPage, SignInPage } from './pages/session';
import { ProjectsPage } from './pages/projects';
import { AuthSettingsPage } from './pages/auth-settings';
import { ApiKeysPage } from './pages/api-keys';
import { BillingPage } from './pages/billing';
import { WebhooksPage } from './pages/webhooks';
import { AccountsPage, InvitationPage, MembersPage } from './pages/members';
import { UserPage, UsersPage } from './pages/users';
import { OrganizationPage, OrganizationSettingsPage, OrganizationsPage } from './pages/organizations';
import { AuditPage } from './pages/audit';
import { MetersPage } from './pages/usage/meters';
import { ErrorNote, Link, Loading, navigate, usePath, type Me } from './ui';

export function App() {
  const path = usePath();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [fault, setFault] = useState<string | null>(null);

  // A sign-in (the one-time link and invitation pages redeem theirs while the session is still
  // being asked for) makes any answer about the session asked for before it stale: a late 401
  // must not sign the account out again.
  const generation = useRef(0);
  const load = useCallback(async () => {
    const asked = ++generation.current;
    setFault(null);
    try {
      const r = await api.session.get();
      if (asked !== generation.current) return;
      if (r.status === 200) {
        setCsrfToken(r.body.csrf_token);
        setMe(r.body.account);
      } else if (r.status === 401) setMe(null);
      else setFault(errorMessage(r.body));
    } catch {
      if (asked === generation.current) setFault(UNREACHABLE);
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const signedIn = (account: Me, csrf: string) => {
    generation.current++;
    setCsrfToken(csrf);
    setMe(account);
    navigate('/');
  };
  // An invitee starts on the Account page, to set a password.
  const invited = (account: Me, csrf: string) => {
    generation.current++;
    setCsrfToken(csrf);
    setMe(account);
    navigate('/account');
  };

  if (path === '/link')
    return (
      <Shell>
        <LinkPage onSignedIn={signedIn} />
      </Shell>
    );
  if (path === '/invitation')
    return (
      <Shell>
        <InvitationPage onSignedIn={invited} />
      </Shell>
    );
  if (fault)
    return (
      <Shell>
        <ErrorNote message={fault} onRetry={load} />
      </Shell>
    );
  if (me === undefined)
    return (
      <Shell>
        <Loading what="your session" />
      </Shell>
    );
  if (me === null)
    return (
      <Shell>
        <SignInPage onSignedIn={signedIn} />
      </Shell>
    );

  const signOut = async () => {
    await api.session.signOut();
    setCsrfToken('');
    setMe(null);
    navigate('/');
  };

  const project = /^\/projects\/([^/]+)(?:\/(api-keys|billing|meters|webhooks|members))?$/.exec(path);
  const user = /^\/projects\/([^/]+)\/users(?:\/([^/]+))?$/.exec(path);
  const audit = /^\/projects\/([^/]+)\/audit$/.exec(path);
  const organization = /^\/projects\/([^/]+)\/organizations(?:\/([^/]+))?$/.exec(path);
  const organizationSettings = /^\/projects\/([^/]+)\/organization-settings$/.exec(path);
  let page: ReactNode;
  if (user?.[2]) page = <UserPage projectId={user[1]!} userId={user[2]} />;
  else if (user) page = <UsersPage projectId={user[1]!} />;
  else if (organization?.[2]) page = <OrganizationPage projectId={organization[1]!} orgId={organization[2]} />;
  else if (organization) page = <OrganizationsPage projectId={organization[1]!} />;
  else if (organizationSettings) page = <OrganizationSettingsPage projectId={organizationSettings[1]!} />;
  else if (audit) page = <AuditPage projectId={audit[1]!} me={me} />;
  else if (project && project[2] === 'api-keys') page = <ApiKeysPage projectId={project[1]!} />;
  else if (project && project[2] === 'billing') page = <BillingPage projectId={project[1]!} />;
  else if (project && project[2] === 'meters') page = <MetersPage projectId={project[1]!} />;
  else if (project && project[2] === 'webhooks') page = <WebhooksPage projectId={project[1]!} />;
  else if (project && project[2] === 'members') page = <MembersPage projectId={project[1]!} me={me} />;
  else if (project) page = <AuthSettingsPage projectId={project[1]!} />;
  else if (path === '/account') page = <AccountPage me={me} onChanged={load} />;
  else if (path === '/accounts' && me.role === 'operator') page = <AccountsPage />;
  else page = <ProjectsPage me={me} />;

  return (
    <Shell
      nav={
        <nav aria-label="Console">
          <Link to="/" current={path === '/' || !!project || !!user || !!audit || !!organization || !!organizationSettings}>
            Projects
          </Link>
          {me.role === 'operator' ? (
            <Link to="/accounts" current={path === '/accounts'}>
              Accounts
            </Link>
          ) : null}
          <Link to="/account" current={path === '/account'}>
            Account
          </Link>
          <span className="muted who">{me.email}</span>
          <button type="button" className="secondary" onClick={signOut}>
            Sign out
          </button>
        </nav>
      }
    >
      {page}
    </Shell>
  );
}

function Shell(props: { children: ReactNode; nav?: ReactNode }) {
  return (
    <>
      <header className="top">
        <span className="brand">Tollgate console</span>
        {props.nav}
      </header>
      <main>{props.children}</main>
    </>
  );
}
