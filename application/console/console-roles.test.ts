import { describe, expect, it } from 'vitest';
import type { ConsoleAccount, ConsoleSignupMode } from '../../domain/console';
import { err, ok, type Result } from '../../domain/result';
import type { CreatedProject, CreateProjectError } from '../projects/create-project';
import type { ProjectStore } from '../stores/project.store';
import { aConsoleAccount, aProject, CallLog, fakeAuditLog, fakeUnitOfWork, FixedClock, strictFake, strictFn } from '../testing/fakes';
import type { ConsoleStore } from './console.store';
import { makeListConsoleAccounts } from './list-console-accounts';
import { makeConsoleProjectAccess, makeCreateConsoleProject, makeListConsoleProjects } from './project-access';
import { makeRemoveConsoleMember } from './remove-console-member';

const operator = aConsoleAccount({ id: 'operator-1', email: 'ops@example.com', role: 'operator' });
const member = aConsoleAccount({ id: 'member-1', email: 'grace@example.com', role: 'member' });

const projectA = aProject({ id: 'project-a', name: 'A' });
const projectB = aProject({ id: 'project-b', name: 'B' });

/** Projects A and B exist; `member-1` belongs to A only. Operators have no memberships. */
function world(log: CallLog) {
  const memberships = new Map<string, string[]>([['member-1', ['project-a', 'project-deleted']]]);
  const store = strictFake<ConsoleStore>(
    'store',
    {
      isMember: async (accountId, projectId) => (memberships.get(accountId) ?? []).includes(projectId),
      projectIdsOf: async (accountId) => memberships.get(accountId) ?? [],
    },
    log,
  );
  const projects = strictFake<Pick<ProjectStore, 'findById' | 'list'>>(
    'projects',
    {
      findById: async (id: string) => [projectA, projectB].find((p) => p.id === id) ?? null,
      list: async () => [projectA, projectB],
    },
    log,
  );
  return { store, projects };
}

describe('which projects a console account sees', () => {
  it('an operator sees every project, without any membership', async () => {
    const log = new CallLog();
    const access = makeConsoleProjectAccess(world(log));
    expect(await access(operator, 'project-b')).toEqual(ok(projectB));
    expect(log.names('store')).toEqual([]);
    expect(await access(operator, 'project-missing')).toEqual(err('project_not_found'));
  });

  it('a member sees the projects it belongs to; any other is not found, as if it did not exist', async () => {
    const log = new CallLog();
    const access = makeConsoleProjectAccess(world(log));
    expect(await access(member, 'project-a')).toEqual(ok(projectA));
    expect(await access(member, 'project-b')).toEqual(err('project_not_found'));
    // The project of another is not even read: its existence is not revealed by timing or errors.
    expect(log.of('projects.findById').map((c) => c.args[0])).toEqual(['project-a']);
  });

  it("an operator's project list is every project; a member's its memberships (a deleted project left out)", async () => {
    const log = new CallLog();
    const list = makeListConsoleProjects(world(log));
    expect(await list(operator)).toEqual([projectA, projectB]);
    expect(await list(member)).toEqual([projectA]);
  });
});

describe('what only an operator may do', () => {
  it("listing the deployment's console accounts: refused to a member before anything is read", async () => {
    const log = new CallLog();
    const store = strictFake<Pick<ConsoleStore, 'listAccounts'>>(
      'store',
      {
        listAccounts: async () => [
          { ...member, projectIds: ['project-a', 'project-deleted'] },
          { ...operator, projectIds: [] },
        ],
      },
      log,
    );
    const list = makeListConsoleAccounts({ store, projects: world(log).projects });
    expect(await list(member)).toEqual(err('console_operator_only'));
    expect(log.names()).toEqual([]);
    // An operator gets every account with the names of its projects; memberships of deleted projects are left out.
    expect(await list(operator)).toEqual(
      ok([
        { ...member, projects: [{ id: 'project-a', name: 'A' }] },
        { ...operator, projects: [] },
      ]),
    );
  });

  function createProject(mode: ConsoleSignupMode) {
    const log = new CallLog();
    const clock = new FixedClock();
    const created: CreatedProject = { project: aProject({ id: 'project-new' }), apiKey: 'tg_key', apiKeyId: 'key-1', signingSecret: 'secret' };
    const create = makeCreateConsoleProject({
      createProject: strictFn<(input: { name: string }) => Promise<Result<CreatedProject, CreateProjectError>>>('createProject', log, async () => ok(created)),
      store: strictFake<Pick<ConsoleStore, 'addMembership'>>('store', { addMembership: async () => undefined }, log),
      clock,
      uow: fakeUnitOfWork(log),
      mode,
    });
    return { create, log, clock, created };
  }

  it('creating a project on an invite-only deployment: an operator may, a member is refused and nothing is created', async () => {
    const asMember = createProject('invite');
    expect(await asMember.create(member, { name: 'New' })).toEqual(err('console_operator_only'));
    expect(asMember.log.names()).toEqual([]);

    const asOperator = createProject('invite');
    expect(await asOperator.create(operator, { name: 'New' })).toEqual(ok(asOperator.created));
    // An operator sees every project already: no membership is recorded.
    expect(asOperator.log.names()).toEqual(['uow.transaction', 'createProject']);
  });

  it('with open sign-up a member may create a project and becomes its member in the same transaction', async () => {
    const { create, log, clock, created } = createProject('open');
    expect(await create(member, { name: 'New' })).toEqual(ok(created));
    const [membership] = log.of('store.addMembership');
    expect(membership).toEqual({ call: 'store.addMembership', args: ['member-1', 'project-new', clock.now()], inTransaction: true });
  });
});

describe('removing a member of a project', () => {
  function setup(members: number, removes = true) {
    const log = new CallLog();
    const audit = fakeAuditLog();
    const remove = makeRemoveConsoleMember({
      store: strictFake<Pick<ConsoleStore, 'countMembers' | 'removeMembership'>>(
        'store',
        { countMembers: async () => members, removeMembership: async () => removes },
        log,
      ),
      clock: new FixedClock(),
      uow: fakeUnitOfWork(log),
      audit,
      actor: (account: ConsoleAccount) => ({ kind: 'admin', id: account.id }),
    });
    return { remove, log, audit };
  }

  it('anyone on the project may remove another member, even the last but one', async () => {
    const { remove, log, audit } = setup(2);
    expect(await remove({ by: member, projectId: 'project-a', accountId: 'member-2' })).toEqual(ok(true));
    expect(log.of('store.removeMembership').map((c) => [c.args, c.inTransaction])).toEqual([[['member-2', 'project-a'], true]]);
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'console.member.removed', target: { kind: 'console_account', id: 'member-2' } })]);
  });

  it('a member may leave, but not as the last member of the project', async () => {
    expect(await setup(2).remove({ by: member, projectId: 'project-a', accountId: 'member-1' })).toEqual(ok(true));
    const last = setup(1);
    expect(await last.remove({ by: member, projectId: 'project-a', accountId: 'member-1' })).toEqual(err('console_last_member'));
    expect(last.log.names('store.removeMembership')).toEqual([]);
    expect(last.audit.entries).toEqual([]);
  });

  it("only leaving is refused to the last member: an operator may remove a project's only member", async () => {
    const { remove } = setup(1);
    expect(await remove({ by: operator, projectId: 'project-a', accountId: 'member-1' })).toEqual(ok(true));
  });

  it('an account that is not a member (an operator, someone else) is not found, and nothing is audited', async () => {
    const { remove, audit } = setup(3, false);
    expect(await remove({ by: member, projectId: 'project-a', accountId: 'operator-1' })).toEqual(err('console_member_not_found'));
    expect(audit.entries).toEqual([]);
  });
});
