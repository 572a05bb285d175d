import { defaultPasskeySettings, relyingParty } from '../../domain/passkeys/relying-party';
import type { ApiKeyRecord } from '../../application/stores/api-key.store';
import type { ProjectChanges } from '../../application/projects/update-project';
import { MFA_METHODS, MFA_POLICIES } from '../../domain/mfa';
import type { Project, ProviderCredentials } from '../../domain/project';
import { CREDENTIAL_FIELDS } from '../../domain/oauth/providers';
import { OAUTH_PROVIDERS, PROVIDERS } from '../../domain/providers';
import { defaultSecurityNoticeSettings, SECURITY_NOTICE_KINDS } from '../../domain/security-notice';
import type { Options } from './args';
import { AUDIT_COMMANDS, AUDIT_GROUPS } from './audit-commands';
import { BILLING_COMMANDS, BILLING_GROUPS } from './billing-commands';
import type { Command, CommandContext } from './command';
import { WEBHOOK_COMMANDS, WEBHOOK_GROUPS } from './webhook-commands';
import { CONSOLE_COMMANDS, CONSOLE_GROUPS } from './console-commands';
import { USER_COMMANDS } from './user-commands';
import { ORG_COMMANDS, ORG_GROUPS } from './org-commands';
import { USAGE_COMMANDS, USAGE_GROUPS } from './usage-commands';
import { useCaseError } from './messages';
import { fields, table } from './render';
import { isSecretSource, readSecret, SECRET_SOURCES, warnInlineSecret } from './secrets';

export type { Command, CommandContext, CommandOutput, Execute } from './command';

// ---------------------------------------------------------------------------------------------
// Rendering

/** The passkey settings as set (null: derived) and the relying party they give now (null: none yet). */
function passkeysView(project: Project) {
  const settings = { ...defaultPasskeySettings(), ...project.settings.passkeys };
  const rp = relyingParty(project);
  return { ...settings, relyingParty: rp.ok ? { id: rp.value.id, origins: rp.value.origins } : null };
}

function projectView(project: Project, credentialsConfigured?: string[]) {
  return {
    id: project.id,
    name: project.name,
    active: project.active,
    settings: {
      enabledProviders: project.settings.enabledProviders,
      callbackUrls: project.settings.callbackUrls,
      allowAccountLinking: project.settings.allowAccountLinking,
      mfaPolicy: project.settings.mfaPolicy,
      mfaMethods: project.settings.mfaMethods,
      defaultLocale: project.settings.defaultLocale,
      securityNotifications: { ...defaultSecurityNoticeSettings(), ...project.settings.securityNotifications },
    },
    passkeys: passkeysView(project),
    ...(credentialsConfigured ? { providerCredentialsConfigured: credentialsConfigured } : {}),
    createdAt: project.createdAt.toISOString(),
    updatedAt: project.updatedAt.toISOString(),
  };
}

function projectText(view: ReturnType<typeof projectView>): string {
  const s = view.settings;
  const pk = view.passkeys;
  const urls = s.callbackUrls.length ? s.callbackUrls : ['(none)'];
  const rows: [string, string][] = [
    ['id', view.id],
    ['name', view.name],
    ['active', view.active ? 'yes' : 'no'],
    ['providers', s.enabledProviders.join(', ') || '(none)'],
  ];
  if (view.providerCredentialsConfigured) rows.push(['credentials set', view.providerCredentialsConfigured.join(', ') || '(none)']);
  rows.push(
    ['callback URLs', urls[0]!],
    ...urls.slice(1).map((u): [string, string] => ['', u]),
    ['account linking', s.allowAccountLinking ? 'on' : 'off'],
    ['MFA policy', s.mfaPolicy],
    ['MFA methods', s.mfaMethods.join(', ')],
    ['default locale', s.defaultLocale],
    ['passkey RP', pk.relyingParty ? `${pk.relyingParty.id} (${pk.rpId === null ? 'derived' : 'set'})` : '(none: no callback URL, or no origin under the id)'],
    ['passkey origins', pk.relyingParty ? `${pk.relyingParty.origins.join(', ')} (${pk.origins === null ? 'derived' : 'set'})` : '(none)'],
    ['passkey UV', pk.userVerification],
    ...SECURITY_NOTICE_KINDS.map((kind, i): [string, string] => [i === 0 ? 'notifications' : '', `${kind}: ${s.securityNotifications[kind] ? 'on' : 'off'}`]),
    ['created', view.createdAt],
    ['updated', view.updatedAt],
  );
  return fields(rows);
}

function apiKeyView(key: ApiKeyRecord) {
  return {
    id: key.id,
    projectId: key.projectId,
    prefix: key.prefix,
    label: key.label,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// Argument checks the use cases cannot make (shapes of CLI values)

type ArgsContext = Pick<CommandContext, 'options' | 'env' | 'warn'>;

/**
 * `<json>`, or where to read it (`@<file>`, `@-` for stdin, `env:<NAME>`): secrets given inline
 * stay in shell history, the process list and npm's echo, and Apple's private key spans lines.
 */
function parseCredentials(ctx: ArgsContext, provider: string, given: string): ProviderCredentials | null {
  const options: Options = ctx.options;
  const raw = readSecret(ctx, `--provider-credentials ${provider}`, given, false);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    options.fail(
      `--provider-credentials ${provider}: the credentials must be a JSON object, e.g. '{"clientId":"...","clientSecret":"..."}' (or null to remove them).`,
    );
  }
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    options.fail(`--provider-credentials ${provider}: the credentials must be a JSON object (or null to remove them).`);
  }
  const credentials: ProviderCredentials = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (!(CREDENTIAL_FIELDS as readonly string[]).includes(key)) {
      options.fail(`--provider-credentials ${provider}: unknown field "${key}"; allowed fields: ${CREDENTIAL_FIELDS.join(', ')}.`);
    }
    if (typeof v !== 'string' || v.length === 0) options.fail(`--provider-credentials ${provider}: "${key}" must be a non-empty string.`);
    credentials[key as (typeof CREDENTIAL_FIELDS)[number]] = v;
  }
  if (Object.keys(credentials).length === 0) {
    options.fail(`--provider-credentials ${provider}: give at least one field (${CREDENTIAL_FIELDS.join(', ')}), or null to remove them.`);
  }
  if (!isSecretSource(given) && (credentials.clientSecret || credentials.privateKey)) warnInlineSecret(ctx, `--provider-credentials ${provider}`);
  return credentials;
}

function projectChanges(ctx: ArgsContext): ProjectChanges {
  const options: Options = ctx.options;
  const changes: ProjectChanges = {};
  const name = options.string('name');
  if (name !== undefined) changes.name = name;
  const active = options.onOff('active');
  if (active !== undefined) changes.active = active;
  if (options.has('enable')) changes.enable = options.list('enable');
  if (options.has('disable')) changes.disable = options.list('disable');
  const both = (changes.enable ?? []).filter((p) => changes.disable?.includes(p));
  if (both.length) options.fail(`"${both[0]}" is given to both --enable and --disable.`);
  if (options.has('add-callback-url')) changes.addCallbackUrls = options.list('add-callback-url');
  if (options.has('remove-callback-url')) changes.removeCallbackUrls = options.list('remove-callback-url');
  const linking = options.onOff('account-linking');
  if (linking !== undefined) changes.allowAccountLinking = linking;
  const policy = options.string('mfa-policy');
  if (policy !== undefined) changes.mfaPolicy = policy;
  const methods = options.string('mfa-methods');
  if (methods !== undefined)
    changes.mfaMethods = methods
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
  const locale = options.string('default-locale');
  if (locale !== undefined) changes.defaultLocale = locale;
  const notify = options.pairs('notify');
  if (notify.length) {
    changes.securityNotifications = {};
    for (const [kind, value] of notify) {
      if (value !== 'on' && value !== 'off') options.fail(`--notify ${kind}: the value must be "on" or "off", got "${value}".`);
      changes.securityNotifications[kind] = value === 'on';
    }
  }
  const rpId = options.string('passkey-rp-id');
  const origins = options.string('passkey-origins');
  const uv = options.string('passkey-user-verification');
  if (rpId !== undefined || origins !== undefined || uv !== undefined) {
    changes.passkeys = {};
    if (rpId !== undefined) changes.passkeys.rpId = rpId === 'derived' ? null : rpId;
    if (origins !== undefined) {
      changes.passkeys.origins =
        origins === 'derived'
          ? null
          : origins
              .split(',')
              .map((o) => o.trim())
              .filter(Boolean);
    }
    if (uv !== undefined) {
      if (uv !== 'required' && uv !== 'preferred') options.fail(`--passkey-user-verification must be "required" or "preferred", got "${uv}".`);
      changes.passkeys.userVerification = uv;
    }
  }
  const credentials = options.pairs('provider-credentials');
  if (credentials.length) {
    changes.providerCredentials = credentials.map(([provider, raw]) => ({ provider, credentials: parseCredentials(ctx, provider, raw) }));
  }
  if (Object.keys(changes).length === 0) options.fail('Nothing to update: give at least one option.');
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Commands

const PROVIDER_LIST = PROVIDERS.join(', ');

export const COMMANDS: Command[] = [
  {
    path: ['project', 'create'],
    args: [],
    summary: 'Create a project; prints its id, first API key and signing secret (shown once)',
    options: {
      name: { arity: 1, required: true, placeholder: '<name>', description: 'project name (1 to 100 characters), required' },
      'callback-url': { arity: 1, repeatable: true, placeholder: '<url>', description: 'register a callback URL (exact match)' },
    },
    plan({ options }) {
      const name = options.string('name');
      if (name === undefined) return options.fail('Missing --name <name>.');
      const callbackUrls = options.list('callback-url');
      return async (c) => {
        const created = await c.createProject({ name, callbackUrls });
        if (!created.ok) throw useCaseError(created.error, { callbackUrls });
        const { project, apiKey, apiKeyId, signingSecret } = created.value;
        const view = projectView(project);
        return {
          json: { project: view, apiKey, apiKeyId, signingSecret },
          text: [
            `Created project "${project.name}". The API key and signing secret are shown only now: keep them.`,
            '',
            `  project id     : ${project.id}`,
            `  API key        : ${apiKey}`,
            `  signing secret : ${signingSecret}`,
            `  callback URLs  : ${project.settings.callbackUrls.join(', ') || '(none)'}`,
          ].join('\n'),
        };
      };
    },
  },
  {
    path: ['project', 'list'],
    args: [],
    summary: 'List projects',
    options: {},
    plan: () => async (c) => {
      const projects = await c.listProjects();
      const views = projects.map((p) => projectView(p));
      const text = views.length
        ? table(
            ['ID', 'ACTIVE', 'PROVIDERS', 'NAME'],
            views.map((v) => [v.id, v.active ? 'yes' : 'no', v.settings.enabledProviders.join(',') || '-', v.name]),
          )
        : 'No projects yet. Create one with: tollgate project create --name <name>';
      return { json: { projects: views }, text };
    },
  },
  {
    path: ['project', 'show'],
    args: ['id'],
    summary: 'Show a project and its settings (never its secrets)',
    options: {},
    plan:
      ({ args }) =>
      async (c) => {
        const project = await c.getProject(args.id!);
        if (!project) throw useCaseError('project_not_found', { projectId: args.id });
        const view = projectView(project, await c.listConfiguredCredentials(project.id));
        return { json: { project: view }, text: projectText(view) };
      },
  },
  {
    path: ['project', 'update'],
    args: ['id'],
    summary: 'Change a project: providers, callback URLs, account linking, MFA, locale, passkeys, notifications, credentials, name, active',
    options: {
      enable: { arity: 1, repeatable: true, placeholder: '<provider>', description: `enable a sign-in provider: ${PROVIDER_LIST}` },
      disable: { arity: 1, repeatable: true, placeholder: '<provider>', description: 'disable a sign-in provider' },
      'add-callback-url': { arity: 1, repeatable: true, placeholder: '<url>', description: 'register a callback URL' },
      'remove-callback-url': { arity: 1, repeatable: true, placeholder: '<url>', description: 'unregister a callback URL' },
      'account-linking': { arity: 1, placeholder: '<on|off>', description: 'allow linking several providers to one user' },
      'mfa-policy': { arity: 1, placeholder: `<${MFA_POLICIES.join('|')}>`, description: 'MFA policy' },
      'mfa-methods': { arity: 1, placeholder: `<${MFA_METHODS.join(',')}>`, description: 'allowed MFA methods, comma-separated' },
      'default-locale': { arity: 1, placeholder: '<locale>', description: 'fallback locale, e.g. en, it, fr' },
      'passkey-rp-id': { arity: 1, placeholder: '<host|derived>', description: "passkeys' relying party id (derived: the first callback URL's host)" },
      'passkey-origins': {
        arity: 1,
        placeholder: '<origin,...|derived>',
        description: "origins passkey ceremonies may come from, comma-separated (derived: the callback URLs' origins)",
      },
      'passkey-user-verification': { arity: 1, placeholder: '<required|preferred>', description: 'whether passkeys must verify the user (PIN, biometrics)' },
      'provider-credentials': {
        arity: 2,
        repeatable: true,
        placeholder: '<provider> <@file|@-|env:NAME|json|null>',
        description:
          `set an OAuth provider's client credentials (${OAUTH_PROVIDERS.join(', ')}): read from ${SECRET_SOURCES} (never inline: shell history and ` +
          `npm's echo keep it), or null to remove them`,
      },
      notify: {
        arity: 2,
        repeatable: true,
        placeholder: '<kind> <on|off>',
        description: `turn a security notification to end users on or off: ${SECURITY_NOTICE_KINDS.join(', ')} (all on by default but new_device)`,
      },
      active: { arity: 1, placeholder: '<on|off>', description: 'activate or deactivate the project' },
      name: { arity: 1, placeholder: '<name>', description: 'rename the project' },
    },
    plan(ctx) {
      const { args } = ctx;
      const changes = projectChanges(ctx);
      return async (c) => {
        const updated = await c.updateProject(args.id!, changes);
        if (!updated.ok) throw useCaseError(updated.error, { projectId: args.id, changes, detail: updated.detail });
        const view = projectView(updated.value, await c.listConfiguredCredentials(updated.value.id));
        return { json: { project: view }, text: `Updated project ${view.id}.\n${projectText(view)}` };
      };
    },
  },
  {
    path: ['apikey', 'create'],
    args: ['projectId'],
    summary: 'Create an API key for a project (the key is shown once)',
    options: { label: { arity: 1, placeholder: '<label>', description: 'a note to recognise the key by (up to 100 characters)' } },
    plan({ args, options }) {
      const label = options.string('label')?.trim();
      if (label !== undefined && (label.length < 1 || label.length > 100)) options.fail('--label must be 1 to 100 characters.');
      return async (c) => {
        const created = await c.createApiKey({ projectId: args.projectId!, label: label ?? null });
        if (!created.ok) throw useCaseError(created.error, { projectId: args.projectId });
        const key = apiKeyView(created.value.record);
        return {
          json: { apiKey: created.value.apiKey, key },
          text: [
            `Created API key ${key.id}${key.label ? ` ("${key.label}")` : ''} for project ${key.projectId}. It is shown only now: keep it.`,
            '',
            `  API key : ${created.value.apiKey}`,
          ].join('\n'),
        };
      };
    },
  },
  {
    path: ['apikey', 'list'],
    args: ['projectId'],
    summary: 'List the API keys of a project (prefixes only)',
    options: {},
    plan:
      ({ args }) =>
      async (c) => {
        const project = await c.getProject(args.projectId!);
        if (!project) throw useCaseError('project_not_found', { projectId: args.projectId });
        const keys = (await c.listApiKeys(project.id)).map(apiKeyView);
        const text = keys.length
          ? table(
              ['ID', 'PREFIX', 'STATUS', 'CREATED', 'LAST USED', 'LABEL'],
              keys.map((k) => [k.id, `${k.prefix}…`, k.revokedAt ? 'revoked' : 'active', k.createdAt, k.lastUsedAt ?? 'never', k.label ?? '']),
            )
          : `Project ${project.id} has no API keys.`;
        return { json: { projectId: project.id, apiKeys: keys }, text };
      },
  },
  {
    path: ['apikey', 'revoke'],
    args: ['projectId', 'keyId'],
    summary: 'Revoke an API key; requests with it then answer 401',
    options: {},
    plan:
      ({ args }) =>
      async (c) => {
        const revoked = await c.revokeApiKey({ projectId: args.projectId!, keyId: args.keyId! });
        if (!revoked.ok) throw useCaseError(revoked.error, { projectId: args.projectId, keyId: args.keyId });
        return {
          json: { revoked: true, projectId: args.projectId, keyId: args.keyId },
          text: `Revoked API key ${args.keyId} of project ${args.projectId}.`,
        };
      },
  },
  {
    path: ['user', 'disable'],
    args: ['projectId', 'userId'],
    summary: 'Disable an end user: sign-ins are refused, every session ends, its tokens stop verifying',
    options: {},
    plan:
      ({ args }) =>
      async (c) => {
        const done = await c.setUserDisabled({ projectId: args.projectId!, userId: args.userId!, disabled: true });
        if (!done.ok) throw useCaseError(done.error, { projectId: args.projectId, userId: args.userId });
        return {
          json: { projectId: args.projectId, userId: args.userId, disabled: true },
          text: `Disabled user ${args.userId} of project ${args.projectId}; its sessions are ended.`,
        };
      },
  },
  {
    path: ['user', 'enable'],
    args: ['projectId', 'userId'],
    summary: 'Enable a disabled end user again',
    options: {},
    plan:
      ({ args }) =>
      async (c) => {
        const done = await c.setUserDisabled({ projectId: args.projectId!, userId: args.userId!, disabled: false });
        if (!done.ok) throw useCaseError(done.error, { projectId: args.projectId, userId: args.userId });
        return {
          json: { projectId: args.projectId, userId: args.userId, disabled: false },
          text: `Enabled user ${args.userId} of project ${args.projectId}.`,
        };
      },
  },
  {
    path: ['user', 'sign-out'],
    args: ['projectId', 'userId'],
    summary: 'End every session of an end user (its refresh tokens are revoked)',
    options: {},
    plan:
      ({ args }) =>
      async (c) => {
        const ended = await c.signOutEverywhere({ projectId: args.projectId!, userId: args.userId! });
        return {
          json: { projectId: args.projectId, userId: args.userId, sessionsEnded: ended },
          text: `Ended ${ended} session(s) of user ${args.userId} of project ${args.projectId}.`,
        };
      },
  },
  ...USER_COMMANDS,
  ...ORG_COMMANDS,
  ...BILLING_COMMANDS,
  ...USAGE_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...AUDIT_COMMANDS,
  ...CONSOLE_COMMANDS,
  {
    path: ['migrate'],
    args: [],
    summary: 'Apply pending database migrations',
    options: {},
    plan: () => async (c) => {
      const applied = await c.migrate();
      return {
        json: { applied },
        text: applied.length ? `Applied ${applied.length} migration(s):\n${applied.map((m) => `  ${m}`).join('\n')}` : 'The database is up to date.',
      };
    },
  },
];

/** Command groups (and subgroups, as `billing sandbox`) with what they administer. */
export const GROUPS: Record<string, string> = {
  project: 'projects and their settings',
  apikey: 'API keys of a project',
  user: 'end users of a project',
  ...ORG_GROUPS,
  ...BILLING_GROUPS,
  ...USAGE_GROUPS,
  ...WEBHOOK_GROUPS,
  ...AUDIT_GROUPS,
  ...CONSOLE_GROUPS,
};

export function findCommand(words: string[]): Command | undefined {
  return COMMANDS.find((c) => c.path.length === words.length && c.path.every((w, i) => w === words[i]));
}
