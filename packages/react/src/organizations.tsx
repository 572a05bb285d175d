import { useCallback, useEffect, useId, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { isTollgateError, type ActiveOrganization, type OrganizationInvitation, type OrganizationMember, type OrganizationRole } from '@tollgate/sdk/browser';
import { useLocale, useOrganization, useOrganizationList, useTollgate, useTollgateState } from './context';
import { directionOf, format, MESSAGES, resolveLocale, type Locale, type Messages } from './messages';

const cx = (...names: Array<string | false | null | undefined>) => names.filter(Boolean).join(' ');
const messageOf = (e: unknown) => (isTollgateError(e) ? e.message : String(e));

/** The component's strings: its `locale` prop, else the provider's. */
function useMessages(locale: string | undefined): { locale: Locale; t: Messages } {
  const providerLocale = useLocale();
  const resolved = locale ? resolveLocale(locale) : providerLocale;
  return { locale: resolved, t: MESSAGES[resolved] };
}

/** Runs one action at a time, keeping its error for the component to show. */
function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (e) {
      setError(messageOf(e));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}

export interface OrganizationSwitcherProps {
  /** Leave out "Personal account" (no active organization). Default: when the project requires an organization. */
  hidePersonal?: boolean;
  /** Make an organization active once it is created (default true). */
  activateOnCreate?: boolean;
  /** Called after the active organization changed (null: none). */
  onSwitched?(organization: ActiveOrganization | null): void;
  /** One of the 20 locales; the provider's by default. */
  locale?: string;
  className?: string;
}

/**
 * The active organization and a panel to change it: the user's organizations (the active one
 * marked with `aria-current`), "Personal account" for none, their pending invitations to accept or
 * decline, and a form to create one when the project lets them. Switching gets a new access token
 * that names the organization; every later call uses it. Nothing when signed out. Class names
 * `tg-org-switcher*`.
 */
export function OrganizationSwitcher(props: OrganizationSwitcherProps) {
  const { locale, t } = useMessages(props.locale);
  const state = useTollgateState();
  const list = useOrganizationList();
  const { active, organization } = useOrganization();
  const [open, setOpen] = useState(false);
  const [creating, setCreating] = useState(false);
  const { busy, error, setError, run } = useAction();
  const panelId = useId();
  const nameId = useId();
  const triggerRef = useRef<HTMLButtonElement>(null);

  if (state.status !== 'signed-in') return null;

  const close = () => {
    setOpen(false);
    setCreating(false);
    setError(null);
    triggerRef.current?.focus();
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape' && open) close();
  };
  const switchTo = (id: string | null) =>
    run(async () => {
      const switched = await list.setActive(id);
      close();
      props.onSwitched?.(switched);
    });
  const create = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get('name') ?? '').trim();
    void run(async () => {
      const created = await list.create({ name });
      if (props.activateOnCreate ?? true) {
        const switched = await list.setActive(created.id);
        props.onSwitched?.(switched);
      }
      close();
    });
  };

  const current = active ? (organization?.name ?? active.slug) : t.personalAccount;
  const hidePersonal = props.hidePersonal ?? list.required;

  return (
    <div className={cx('tg-org-switcher', props.className)} lang={locale} dir={directionOf(locale)}>
      <button
        ref={triggerRef}
        type="button"
        className="tg-org-switcher__trigger"
        aria-expanded={open}
        aria-controls={panelId}
        title={t.switchOrganization}
        onKeyDown={onKeyDown}
        onClick={() => (open ? close() : setOpen(true))}
      >
        <span className="tg-org-switcher__current">{current}</span>
      </button>
      {open && (
        <div id={panelId} className="tg-org-switcher__panel" role="group" aria-label={t.switchOrganization} onKeyDown={onKeyDown}>
          {/* biome-ignore lint/a11y/noRedundantRoles: Safari drops a list's semantics when its style removes the markers; the role keeps them */}
          <ul className="tg-org-switcher__options" role="list" aria-busy={!list.isLoaded || undefined}>
            {!hidePersonal && (
              <li>
                <button
                  type="button"
                  className="tg-org-switcher__option"
                  aria-current={active === null ? 'true' : undefined}
                  disabled={busy}
                  onClick={() => void switchTo(null)}
                >
                  <span className="tg-org-switcher__name">{t.personalAccount}</span>
                </button>
              </li>
            )}
            {list.organizations.map((o) => (
              <li key={o.id}>
                <button
                  type="button"
                  className="tg-org-switcher__option"
                  aria-current={active?.id === o.id ? 'true' : undefined}
                  disabled={busy}
                  onClick={() => void switchTo(o.id)}
                >
                  <span className="tg-org-switcher__name">{o.name}</span> <span className="tg-org-switcher__role">{o.role}</span>
                </button>
              </li>
            ))}
          </ul>
          {list.invitations.length > 0 && (
            <div className="tg-org-switcher__invitations">
              <p className="tg-org-switcher__heading">{t.invitations}</p>
              <ul className="tg-org-switcher__invitation-list">
                {list.invitations.map((invitation) => (
                  <li key={invitation.id} className="tg-org-switcher__invitation">
                    <span>{format(t.invitationTo, { organization: invitation.organization.name })}</span>{' '}
                    <button
                      type="button"
                      className="tg-org-switcher__accept"
                      disabled={busy}
                      onClick={() => void run(() => list.acceptInvitation({ invitationId: invitation.id }))}
                    >
                      {t.accept}
                    </button>{' '}
                    <button
                      type="button"
                      className="tg-org-switcher__decline"
                      disabled={busy}
                      onClick={() => void run(() => list.declineInvitation(invitation.id))}
                    >
                      {t.decline}
                    </button>
                  </li>
                ))}
              </ul>
            </div>
          )}
          {list.canCreate &&
            (creating ? (
              <form className="tg-org-switcher__create" onSubmit={create}>
                <label htmlFor={nameId}>{t.name}</label>
                <input id={nameId} name="name" required maxLength={100} autoComplete="organization" />
                <button type="submit" className="tg-org-switcher__submit" disabled={busy}>
                  {t.create}
                </button>
                <button type="button" className="tg-org-switcher__cancel" onClick={() => setCreating(false)}>
                  {t.cancel}
                </button>
              </form>
            ) : (
              <button type="button" className="tg-org-switcher__create-button" onClick={() => setCreating(true)}>
                {t.createOrganization}
              </button>
            ))}
          {(error ?? state.organizations.error) && (
            <p className="tg-org-switcher__error" role="alert">
              {error ?? state.organizations.error?.message}
            </p>
          )}
        </div>
      )}
    </div>
  );
}

export interface OrganizationProfileProps {
  /** One of the user's organizations; the active one by default. */
  organizationId?: string;
  /** Called after the user left or deleted the organization. */
  onLeft?(): void;
  /** One of the 20 locales; the provider's by default. */
  locale?: string;
  className?: string;
}

const BUILT_IN_ROLES = ['owner', 'admin', 'member'];

/**
 * An organization's page: its members (with role changes and removal for those whose role grants
 * `org:members:manage`, and Leave for oneself), its pending invitations with a form to invite and
 * Revoke (the same permission), and its settings (rename with `org:settings:manage`, delete with
 * `org:delete`). What is offered follows the user's permissions as their organizations list says;
 * Tollgate checks them again on every call. Class names `tg-org-profile*`.
 */
export function OrganizationProfile(props: OrganizationProfileProps) {
  const client = useTollgate();
  const { locale, t } = useMessages(props.locale);
  const state = useTollgateState();
  const { organizations } = useOrganizationList();
  const id = props.organizationId ?? state.organization?.id ?? null;
  const details = organizations.find((o) => o.id === id) ?? null;
  const claim = state.organization?.id === id ? state.organization : null;
  const permissions = details?.permissions ?? claim?.permissions ?? [];
  const myRole = details?.role ?? claim?.role ?? null;
  const canManage = permissions.includes('org:members:manage');
  const canRename = permissions.includes('org:settings:manage');
  const canDelete = permissions.includes('org:delete');
  const isOwner = myRole === 'owner';

  const [members, setMembers] = useState<OrganizationMember[] | null>(null);
  const [invitations, setInvitations] = useState<OrganizationInvitation[] | null>(null);
  const [roles, setRoles] = useState<OrganizationRole[] | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  const [stamp, setStamp] = useState(0);
  const { busy, error, setError, run } = useAction();
  const ids = { members: useId(), invitations: useId(), settings: useId(), email: useId(), role: useId(), name: useId() };

  useEffect(() => {
    setMembers(null);
    setInvitations(null);
    setNotice(null);
    setConfirmingDelete(false);
  }, [id]);

  useEffect(() => {
    if (!id) return;
    let live = true;
    client.organizations.members(id, { limit: 100 }).then(
      (page) => live && setMembers(page.members),
      (e: unknown) => live && setError(messageOf(e)),
    );
    return () => {
      live = false;
    };
  }, [client, id, stamp, setError]);

  useEffect(() => {
    if (!id || !canManage) return;
    let live = true;
    client.organizations.invitations(id).then(
      (list) => live && setInvitations(list.filter((i) => i.status === 'pending')),
      (e: unknown) => live && setError(messageOf(e)),
    );
    return () => {
      live = false;
    };
  }, [client, id, canManage, stamp, setError]);

  useEffect(() => {
    if (!canManage) return;
    let live = true;
    client.organizations.roles().then(
      (list) => live && setRoles(list),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [client, canManage]);

  // Others join, leave and change roles meanwhile: read again when the tab becomes visible.
  useEffect(() => {
    if (typeof document === 'undefined') return;
    const onVisible = () => {
      if (document.visibilityState === 'visible') setStamp((n) => n + 1);
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => document.removeEventListener('visibilitychange', onVisible);
  }, []);

  if (!id) {
    return (
      <div className={cx('tg-org-profile', props.className)} lang={locale} dir={directionOf(locale)}>
        <p className="tg-org-profile__empty">{t.noOrganization}</p>
      </div>
    );
  }

  const reload = () => setStamp((n) => n + 1);
  const roleName = (key: string) => roles?.find((r) => r.key === key)?.name ?? key;
  // Owner is granted and taken by owners only.
  const grantable = (roles?.map((r) => r.key) ?? BUILT_IN_ROLES).filter((key) => key !== 'owner' || isOwner);
  const roleOptions = (keys: string[]) =>
    keys.map((key) => (
      <option key={key} value={key}>
        {roleName(key)}
      </option>
    ));
  const name = details?.name ?? claim?.slug ?? '';

  const invite = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const email = String(data.get('email') ?? '').trim();
    const role = String(data.get('role') ?? 'member');
    setNotice(null);
    void run(async () => {
      await client.organizations.invite(id, { email, role, locale });
      form.reset();
      setNotice(format(t.invitationSent, { email }));
      reload();
    });
  };
  const rename = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const newName = String(new FormData(event.currentTarget).get('name') ?? '').trim();
    setNotice(null);
    void run(async () => {
      await client.organizations.update(id, { name: newName });
      setNotice(t.saved);
    });
  };
  const leaving = (action: () => Promise<void>) =>
    void run(async () => {
      await action();
      props.onLeft?.();
    });

  return (
    <div className={cx('tg-org-profile', props.className)} lang={locale} dir={directionOf(locale)}>
      <h3 className="tg-org-profile__title">{name}</h3>
      {error && (
        <p className="tg-org-profile__error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p className="tg-org-profile__notice" role="status">
          {notice}
        </p>
      )}
      <section className="tg-org-profile__section" aria-labelledby={ids.members}>
        <h4 className="tg-org-profile__heading" id={ids.members}>
          {t.members}
        </h4>
        {members === null ? (
          <p className="tg-org-profile__loading">{t.loading}</p>
        ) : (
          // biome-ignore lint/a11y/noRedundantRoles: Safari drops a list's semantics when its style removes the markers; the role keeps them
          <ul className="tg-org-profile__members" role="list">
            {members.map((member) => {
              const self = member.user_id === state.user?.id;
              const label = member.name ?? member.email ?? member.user_id;
              const manageable = canManage && !self && (member.role !== 'owner' || isOwner);
              return (
                <li key={member.user_id} className="tg-org-profile__member">
                  <span className="tg-org-profile__member-name">
                    {label}
                    {self ? ` (${t.you})` : ''}
                  </span>
                  {member.name && member.email ? <span className="tg-org-profile__member-email">{member.email}</span> : null}
                  {manageable ? (
                    <select
                      className="tg-org-profile__role-select"
                      aria-label={format(t.roleOf, { name: label })}
                      value={member.role}
                      disabled={busy}
                      onChange={(event) => {
                        const role = event.target.value;
                        void run(async () => {
                          await client.organizations.setRole(id, member.user_id, role);
                          reload();
                        });
                      }}
                    >
                      {roleOptions(grantable.includes(member.role) ? grantable : [member.role, ...grantable])}
                    </select>
                  ) : (
                    <span className="tg-org-profile__role">{roleName(member.role)}</span>
                  )}
                  {manageable && (
                    <button
                      type="button"
                      className="tg-org-profile__remove"
                      aria-label={format(t.removeMember, { name: label })}
                      disabled={busy}
                      onClick={() =>
                        void run(async () => {
                          await client.organizations.removeMember(id, member.user_id);
                          reload();
                        })
                      }
                    >
                      {t.remove}
                    </button>
                  )}
                  {self && (
                    <button type="button" className="tg-org-profile__leave" disabled={busy} onClick={() => leaving(() => client.organizations.leave(id))}>
                      {t.leave}
                    </button>
                  )}
                </li>
              );
            })}
          </ul>
        )}
      </section>
      {canManage && (
        <section className="tg-org-profile__section" aria-labelledby={ids.invitations}>
          <h4 className="tg-org-profile__heading" id={ids.invitations}>
            {t.invitations}
          </h4>
          <form className="tg-org-profile__invite" onSubmit={invite}>
            <label htmlFor={ids.email}>{t.email}</label>
            <input id={ids.email} name="email" type="email" required autoComplete="off" />
            <label htmlFor={ids.role}>{t.role}</label>
            <select id={ids.role} name="role" defaultValue="member">
              {roleOptions(grantable)}
            </select>
            <button type="submit" className="tg-org-profile__submit" disabled={busy}>
              {t.invite}
            </button>
          </form>
          {invitations !== null &&
            (invitations.length === 0 ? (
              <p className="tg-org-profile__empty">{t.noInvitations}</p>
            ) : (
              // biome-ignore lint/a11y/noRedundantRoles: Safari drops a list's semantics when its style removes the markers; the role keeps them
              <ul className="tg-org-profile__invitations" role="list">
                {invitations.map((invitation) => (
                  <li key={invitation.id} className="tg-org-profile__invitation">
                    <span className="tg-org-profile__invitation-email">{invitation.email}</span>{' '}
                    <span className="tg-org-profile__role">{roleName(invitation.role)}</span>{' '}
                    <button
                      type="button"
                      className="tg-org-profile__revoke"
                      aria-label={`${t.revoke}: ${invitation.email}`}
                      disabled={busy}
                      onClick={() =>
                        void run(async () => {
                          await client.organizations.revokeInvitation(id, invitation.id);
                          reload();
                        })
                      }
                    >
                      {t.revoke}
                    </button>
                  </li>
                ))}
              </ul>
            ))}
        </section>
      )}
      {(canRename || canDelete) && (
        <section className="tg-org-profile__section" aria-labelledby={ids.settings}>
          <h4 className="tg-org-profile__heading" id={ids.settings}>
            {t.settings}
          </h4>
          {canRename && (
            <form className="tg-org-profile__rename" onSubmit={rename}>
              <label htmlFor={ids.name}>{t.name}</label>
              <input id={ids.name} key={name} name="name" defaultValue={name} required maxLength={100} />
              <button type="submit" className="tg-org-profile__submit" disabled={busy}>
                {t.save}
              </button>
            </form>
          )}
          {canDelete &&
            (confirmingDelete ? (
              <div className="tg-org-profile__confirm-delete" role="group" aria-label={t.deleteOrganization}>
                <p>{format(t.deleteConfirm, { organization: name })}</p>
                <button type="button" className="tg-org-profile__delete" disabled={busy} onClick={() => leaving(() => client.organizations.delete(id))}>
                  {t.confirm}
                </button>{' '}
                <button type="button" className="tg-org-profile__cancel" onClick={() => setConfirmingDelete(false)}>
                  {t.cancel}
                </button>
              </div>
            ) : (
              <button type="button" className="tg-org-profile__delete" onClick={() => setConfirmingDelete(true)}>
                {t.deleteOrganization}
              </button>
            ))}
        </section>
      )}
    </div>
  );
}
