import { describe, expect, it } from 'vitest';
import { makeProjectOwners } from '../../application/console/project-owners';
import type { ConsoleProjectMember } from '../../domain/console';
import { ConsoleAccountNoticeMailRenderer } from '../../infrastructure/mail/console-account-notice-renderer';
import { EndpointDisabledMailRenderer } from '../../infrastructure/mail/endpoint-disabled-renderer';

describe('the notice that a webhook endpoint was disabled', () => {
  const mail = {
    to: 'owner@example.com',
    projectName: 'Shop <b>&</b> "Co"',
    endpointUrl: 'https://hooks.example.com/in?a=1&b=<2>',
    reason: 'the endpoint answered 410 Gone',
    disabledAt: '2026-03-02T09:00:00.000Z',
    consoleUrl: 'https://auth.example.com/dashboard/projects/p1/webhooks',
  };

  it('names the project, the endpoint, why and when, and links the Webhooks page; every value escaped in the HTML', () => {
    const { subject, text, html } = new EndpointDisabledMailRenderer().render(mail);
    expect(subject).toBe('A webhook endpoint of Shop <b>&</b> "Co" was disabled');
    expect(text).toContain('the project "Shop <b>&</b> "Co"" on 2026-03-02T09:00:00.000Z');
    expect(text).toContain('https://hooks.example.com/in?a=1&b=<2>\nWhy: the endpoint answered 410 Gone.');
    expect(text).toContain(mail.consoleUrl);
    expect(html).toContain('<strong>Shop &lt;b&gt;&amp;&lt;/b&gt; &quot;Co&quot;</strong>');
    expect(html).toContain('<code>https://hooks.example.com/in?a=1&amp;b=&lt;2&gt;</code>');
    expect(html).toContain(`<a href="${mail.consoleUrl}">Open the Webhooks page</a>`);
    expect(html).not.toContain('<b>');
  });
});

describe('who hears about a project', () => {
  const account = (email: string, role: 'operator' | 'member'): ConsoleProjectMember => ({ accountId: email, email, role, since: new Date(0) });
  const owners = (list: ConsoleProjectMember[]) => makeProjectOwners({ listProjectMembers: async () => list }).emailsOf('p1');

  it('its members; when it has none, every operator; nobody on a deployment without accounts', async () => {
    expect(await owners([account('m1@example.com', 'member'), account('m2@example.com', 'member'), account('op@example.com', 'operator')])).toEqual([
      'm1@example.com',
      'm2@example.com',
    ]);
    expect(await owners([account('op1@example.com', 'operator'), account('op2@example.com', 'operator')])).toEqual(['op1@example.com', 'op2@example.com']);
    expect(await owners([])).toEqual([]);
  });
});

describe("the notice of a change to a console account's authenticator app", () => {
  it('says what changed, when, and what to do, for each change; values escaped in the HTML', () => {
    const renderer = new ConsoleAccountNoticeMailRenderer();
    const base = { to: 'ada@example.com', at: '2026-03-02T09:00:00.000Z', accountUrl: 'https://auth.example.com/dashboard/account?a=1&b=2' };
    const subjects = (['totp_enabled', 'totp_disabled', 'totp_removed'] as const).map((kind) => renderer.render({ ...base, kind }).subject);
    expect(subjects).toEqual([
      'Two-step sign-in is on for your Tollgate console account',
      'Two-step sign-in is off for your Tollgate console account',
      'The authenticator app of your Tollgate console account was removed',
    ]);
    const removed = renderer.render({ ...base, kind: 'totp_removed' });
    expect(removed.text).toContain('When: 2026-03-02T09:00:00.000Z.');
    expect(removed.text).toContain(base.accountUrl);
    expect(removed.html).toContain('<a href="https://auth.example.com/dashboard/account?a=1&amp;b=2">Open your Account page</a>');
  });
});
