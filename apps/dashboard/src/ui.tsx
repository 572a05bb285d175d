import { useCallback, useEffect, useRef, useState, type DependencyList, type ReactNode } from 'react';
import { errorMessage, UNREACHABLE } from './api';

export interface Me {
  id: string;
  email: string;
  role: 'operator' | 'member';
  totp_enabled: boolean;
}

export const BASE = '/dashboard';

/** A tiny router over the History API: the console's pages live under /dashboard. */
export function navigate(to: string) {
  window.history.pushState(null, '', BASE + to);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(() => window.location.pathname.slice(BASE.length) || '/');
  useEffect(() => {
    const on = () => setPath(window.location.pathname.slice(BASE.length) || '/');
    window.addEventListener('popstate', on);
    return () => window.removeEventListener('popstate', on);
  }, []);
  return path;
}

export function Link(props: { to: string; children: ReactNode; className?: string; current?: boolean }) {
  return (
    <a
      href={BASE + props.to}
      className={props.className}
      aria-current={props.current ? 'page' : undefined}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}

/** A page's heading, focused when the page opens, so screen readers announce the new page. */
export function PageTitle(props: { children: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {props.children}
    </h1>
  );
}

export function Loading(props: { what: string }) {
  return (
    <p role="status" className="muted">
      Loading {props.what}…
    </p>
  );
}

export function ErrorNote(props: { message: string | null; onRetry?: () => void }) {
  if (!props.message) return null;
  return (
    <div role="alert" className="error">
      {props.message}
      {props.onRetry ? (
        <button type="button" className="link" onClick={props.onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** Copies a value, saying so (for screen readers too). */
export function CopyButton(props: { value: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="secondary small"
      aria-label={`Copy ${props.label}`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(props.value);
          setDone(true);
        } catch {
          setDone(false);
        }
      }}
    >
      {done ? 'Copied' : 'Copy'}
      <span className="visually-hidden" role="status">
        {done ? `${props.label} copied` : ''}
      </span>
    </button>
  );
}

/** A secret shown once (an API key): it stays until dismissed. */
export function ShownOnce(props: { title: string; value: string; onDone: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <div className="once" role="region" aria-label={props.title} tabIndex={-1} ref={ref}>
      <h2>{props.title}</h2>
      <p>It is shown only now: copy it and keep it somewhere safe.</p>
      <p className="secret">
        <code data-testid="secret">{props.value}</code> <CopyButton value={props.value} label={props.title} />
      </p>
      <button type="button" onClick={props.onDone}>
        I have kept it
      </button>
    </div>
  );
}

/** The pages of one project, as tabs of a navigation landmark. */
export function ProjectNav(props: {
  projectId: string;
  current: 'auth' | 'api-keys' | 'billing' | 'webhooks' | 'members' | 'users' | 'organizations' | 'audit';
}) {
  const base = `/projects/${props.projectId}`;
  const tabs: Array<[typeof props.current, string, string]> = [
    ['auth', base, 'Authentication'],
    ['api-keys', `${base}/api-keys`, 'API keys'],
    ['billing', `${base}/billing`, 'Billing'],
    ['webhooks', `${base}/webhooks`, 'Webhooks'],
    ['members', `${base}/members`, 'Members'],
    ['users', `${base}/users`, 'Users'],
    ['organizations', `${base}/organizations`, 'Organizations'],
    ['audit', `${base}/audit`, 'Audit log'],
  ];
  return (
    <nav aria-label="Project" className="tabs">
      <Link to="/">← Projects</Link>
      {tabs.map(([key, to, label]) => (
        <Link key={key} to={to} current={props.current === key}>
          {label}
        </Link>
      ))}
    </nav>
  );
}

/**
 * A table that scrolls sideways inside its own box on a narrow screen. The box takes the keyboard
 * focus (the arrow keys scroll it) and is named, like the table, by the caption screen readers read.
 */
export function TableBox(props: { caption: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a table that scrolls sideways takes the focus to scroll (axe: scrollable-region-focusable)
    <div className="table-wrap" tabIndex={0} role="region" aria-label={props.caption}>
      <table>
        <caption className="visually-hidden">{props.caption}</caption>
        {props.children}
      </table>
    </div>
  );
}

/** A date and time as the reader's locale writes it; `never` for none. */
export const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

type Answer = { status: number; body: unknown };
type OkBody<R> = R extends { status: 200; body: infer B } ? B : never;

/**
 * What a page shows, loaded with the typed client when it opens and on `reload`: `data` (null until
 * the first answer) picked from a 200 answer, or `error`, the API's own message (or that the server
 * cannot be reached). Pages set `error` from their actions too.
 */
export function useLoad<R extends Answer, T>(request: () => Promise<R>, pick: (body: OkBody<R>) => T, deps: DependencyList) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    setError(null);
    const r = await request().catch(() => null);
    if (r?.status === 200) setData(pick(r.body as OkBody<R>));
    else setError(r ? errorMessage(r.body) : UNREACHABLE);
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, setData, error, setError, reload };
}

/**
 * A list read a page at a time with the API's cursor (as `useLoad` reads one answer): `rows` so
 * far (null until the first page), `next` (the next page's cursor, null on the last), `more` to
 * append the next page, `reload` to start again from the newest.
 */
export function usePages<R extends Answer, T>(
  request: (cursor: string | null) => Promise<R>,
  pick: (body: OkBody<R>) => { rows: T[]; next: string | null },
  deps: DependencyList,
) {
  const [rows, setRows] = useState<T[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = useCallback(async (cursor: string | null) => {
    setError(null);
    setBusy(true);
    const r = await request(cursor).catch(() => null);
    setBusy(false);
    if (r?.status !== 200) return setError(r ? errorMessage(r.body) : UNREACHABLE);
    const page = pick(r.body as OkBody<R>);
    setRows((before) => (cursor && before ? [...before, ...page.rows] : page.rows));
    setNext(page.next);
  }, deps);
  const reload = useCallback(() => load(null), [load]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { rows, next, error, busy, reload, more: () => load(next) };
}

/** "Load more" under a paged list, while it has a next page. */
export function LoadMore(props: { pages: { next: string | null; busy: boolean; more: () => Promise<unknown> }; what: string }) {
  if (!props.pages.next) return null;
  return (
    <button type="button" className="secondary" disabled={props.pages.busy} onClick={() => void props.pages.more()} aria-label={`Load more ${props.what}`}>
      {props.pages.busy ? 'Loading…' : 'Load more'}
    </button>
  );
}
