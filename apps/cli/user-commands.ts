import { USER_PAGE_MAX } from '../../application/users/list-users';
import type { UserDetail } from '../../application/users/show-user';
import { isMfaMethod } from '../../domain/mfa';
import type { EndUser } from '../../domain/user';
import type { Command } from './command';
import { useCaseError } from './messages';
import { fields, table } from './render';

/** A project's end users as the operator reads them (the console's Users page calls the same use cases). */

function userView(u: EndUser) {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    provider: u.provider,
    emailVerified: u.emailVerified,
    disabled: u.disabled,
    createdAt: u.createdAt.toISOString(),
  };
}

function detailView(d: UserDetail) {
  const s = d.subscription;
  return {
    user: userView(d.user),
    identities: d.identities.map((i) => ({ provider: i.provider, email: i.email, createdAt: i.createdAt.toISOString() })),
    mfaFactors: d.mfaFactors.map((f) => ({ kind: f.kind, createdAt: f.createdAt.toISOString(), remaining: f.remaining })),
    sessions: d.sessions.map((x) => ({
      id: x.id,
      provider: x.provider,
      createdAt: x.createdAt.toISOString(),
      lastUsedAt: x.lastUsedAt.toISOString(),
      ip: x.ip,
      userAgent: x.userAgent,
    })),
    subscription: s
      ? {
          id: s.id,
          status: s.status,
          plan: s.plan.name,
          price: s.price.name,
          currentPeriodEnd: s.currentPeriodEnd.toISOString(),
          cancelAtPeriodEnd: s.cancelAtPeriodEnd,
        }
      : null,
  };
}

function detailText(v: ReturnType<typeof detailView>): string {
  const u = v.user;
  const rows: [string, string][] = [
    ['id', u.id],
    ['email', `${u.email ?? '-'}${u.emailVerified ? ' (verified)' : ''}`],
    ['name', u.name ?? '-'],
    ['provider', u.provider],
    ['disabled', u.disabled ? 'yes' : 'no'],
    ['created', u.createdAt],
  ];
  const identities = v.identities.length ? v.identities.map((i) => `${i.provider}${i.email ? ` (${i.email})` : ''} since ${i.createdAt}`) : ['(none)'];
  rows.push(['identities', identities[0]!], ...identities.slice(1).map((l): [string, string] => ['', l]));
  const factors = v.mfaFactors.length
    ? v.mfaFactors.map((f) => `${f.kind} since ${f.createdAt}${f.remaining !== null ? `, ${f.remaining} unused` : ''}`)
    : ['(none)'];
  rows.push(['MFA factors', factors[0]!], ...factors.slice(1).map((l): [string, string] => ['', l]));
  const s = v.subscription;
  rows.push([
    'subscription',
    s ? `${s.plan} (${s.price}), ${s.status}, period ends ${s.currentPeriodEnd}${s.cancelAtPeriodEnd ? ', cancels then' : ''}` : '(none)',
  ]);
  const sessions = v.sessions.length
    ? table(
        ['SESSION', 'PROVIDER', 'CREATED', 'LAST USED', 'IP', 'USER AGENT'],
        v.sessions.map((x) => [x.id, x.provider, x.createdAt, x.lastUsedAt, x.ip ?? '-', x.userAgent ?? '-']),
      )
    : 'No live sessions.';
  return `${fields(rows)}\n\n${sessions}`;
}

export const USER_COMMANDS: Command[] = [
  {
    path: ['user', 'list'],
    args: ['projectId'],
    summary: "List a project's end users, newest first; --search matches part of the email, case-insensitive",
    options: {
      search: { arity: 1, placeholder: '<text>', description: 'only users whose email contains this text (a prefix, a domain, ...)' },
      limit: { arity: 1, placeholder: '<n>', description: `users per page, 1 to ${USER_PAGE_MAX} (default 25)` },
      cursor: { arity: 1, placeholder: '<cursor>', description: 'the next page: the cursor the previous page printed' },
    },
    plan({ args, options }) {
      const projectId = args.projectId!;
      const limit = options.int('limit', 1, USER_PAGE_MAX);
      const search = options.string('search');
      const cursor = options.string('cursor');
      return async (c) => {
        const page = await c.listUsers({
          projectId,
          ...(search !== undefined ? { search } : {}),
          ...(limit !== undefined ? { limit } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
        });
        if (!page.ok) throw useCaseError(page.error, { projectId });
        const users = page.value.users.map(userView);
        const text = [
          users.length
            ? table(
                ['ID', 'EMAIL', 'NAME', 'PROVIDER', 'VERIFIED', 'DISABLED', 'CREATED'],
                users.map((u) => [u.id, u.email ?? '-', u.name ?? '-', u.provider, u.emailVerified ? 'yes' : 'no', u.disabled ? 'yes' : 'no', u.createdAt]),
              )
            : search !== undefined
              ? `No user of project ${projectId} has an email containing "${search}".`
              : `Project ${projectId} has no users.`,
          ...(page.value.nextCursor ? ['', `More users: add --cursor ${page.value.nextCursor}`] : []),
        ].join('\n');
        return { json: { projectId, users, nextCursor: page.value.nextCursor }, text };
      };
    },
  },
  {
    path: ['user', 'show'],
    args: ['projectId', 'userId'],
    summary: 'Show an end user: identities, MFA factors (never a secret), live sessions, subscription',
    options: {},
    plan:
      ({ args }) =>
      async (c) => {
        const found = await c.showUser({ projectId: args.projectId!, userId: args.userId! });
        if (!found.ok) throw useCaseError(found.error, { projectId: args.projectId, userId: args.userId });
        const view = detailView(found.value);
        return { json: { projectId: args.projectId, ...view }, text: detailText(view) };
      },
  },
  {
    path: ['user', 'mfa-remove'],
    args: ['projectId', 'userId', 'factor'],
    summary: "Remove an MFA factor (totp, sms or backup_codes) of an end user; unless the project's MFA policy is off, its sessions end",
    options: {},
    plan({ args, options }) {
      const given = args.factor!;
      if (!isMfaMethod(given) || given === 'passkey') return options.fail(`<factor> must be totp, sms or backup_codes, got "${given}".`);
      const factor = given;
      return async (c) => {
        const removed = await c.removeMfaFactor({ projectId: args.projectId!, userId: args.userId!, factor });
        if (!removed.ok) throw useCaseError(removed.error, { projectId: args.projectId, userId: args.userId });
        const ended = removed.value.sessionsEnded;
        return {
          json: { projectId: args.projectId, userId: args.userId, factor, sessionsEnded: ended },
          text: `Removed ${factor} of user ${args.userId} of project ${args.projectId}${ended !== null ? `; ${ended} session(s) ended` : ''}.`,
        };
      };
    },
  },
];
