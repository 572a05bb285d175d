import { describe, expect, it } from 'vitest';
import type { SecurityNoticeMail } from '../../application/notifications/security-notice';
import type { OrganizationInvitationMail } from '../../application/organizations/invitation-mail';
import { ORGANIZATION_INVITATION_TOPIC } from '../../application/organizations/invitation-mail';
import { SUPPORTED_LOCALES } from '../../domain/locale';
import { TOLLGATE_TOPICS, organizationInvitationMailSchema } from '../../infrastructure/jobs/topics';
import { I18nextEmailRenderer, loadEmailLocales } from '../../infrastructure/mail/i18next-email-renderer';
import { OrganizationInvitationMailRenderer } from '../../infrastructure/mail/organization-invitation-renderer';
import { securityNoticeSchema } from '../../infrastructure/mail/security-notice.topic';

const locales = loadEmailLocales();
const invitations = new OrganizationInvitationMailRenderer(locales);
const mail = (over: Partial<OrganizationInvitationMail> = {}): OrganizationInvitationMail => ({
  to: 'grace@example.com',
  locale: 'en',
  projectName: 'Acme & "Co"',
  organizationName: 'Team <script>alert(1)</script>',
  invitedBy: 'Ada <ada@example.com>',
  roleName: 'Admin <b>',
  url: 'https://app.example.com/cb?tollgate_invitation=tok&x=<1>',
  expiresInDays: 7,
  ...over,
});

describe('the invitation to join an organization', () => {
  it('in English: who invited, to what, as which role, the link, the expiry and what to do if unexpected; values escaped in the HTML', () => {
    const r = invitations.render(mail());
    expect(r.subject).toBe('Ada <ada@example.com> invited you to join Team <script>alert(1)</script> on Acme & "Co"');
    expect(r.text).toContain('Ada <ada@example.com> invited you to join Team <script>alert(1)</script> on Acme & "Co" as Admin <b>.');
    expect(r.text).toContain('Accept the invitation:\nhttps://app.example.com/cb?tollgate_invitation=tok&x=<1>');
    expect(r.text).toContain('The invitation expires in 7 days.');
    expect(r.text).toContain('If you did not expect it, ignore this email.');
    expect(r.html).toContain('<html lang="en" dir="ltr">');
    expect(r.html).toContain(
      'Ada &lt;ada@example.com&gt; invited you to join Team &lt;script&gt;alert(1)&lt;/script&gt; on Acme &amp; &quot;Co&quot; as Admin &lt;b&gt;.',
    );
    expect(r.html).toContain('href="https://app.example.com/cb?tollgate_invitation=tok&amp;x=&lt;1&gt;"');
    expect(r.html).toContain('>Accept the invitation</a>');
    expect(r.html).toContain('The invitation expires in 7 days.');
    expect(r.html).not.toMatch(/<script|<b>|<ada@/);
    expect(r.text + r.html).not.toMatch(/\{\{|\}\}/);
  });

  it('without an inviter: a sentence that names nobody', () => {
    const r = invitations.render(mail({ invitedBy: null, expiresInDays: 1 }));
    expect(r.subject).toBe('You are invited to join Team <script>alert(1)</script> on Acme & "Co"');
    expect(r.text).toContain('You were invited to join Team <script>alert(1)</script> on Acme & "Co" as Admin <b>.');
    expect(r.text).toContain('The invitation expires in 1 day.');
    expect(r.text).not.toContain('Ada');
  });

  it('in Arabic, right to left, and in Japanese, translated and escaped', () => {
    const ar = invitations.render(mail({ locale: 'ar' }));
    expect(ar.html).toContain('<html lang="ar" dir="rtl">');
    expect(ar.html).toContain('<div dir="rtl"');
    expect(ar.subject).toContain('دعاك Ada <ada@example.com>');
    expect(ar.html).toContain('Team &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(ar.html).not.toContain('<script>');
    expect(ar.text).toContain('قبول الدعوة');
    expect(ar.text).toContain('7 أيام');

    const ja = invitations.render(mail({ locale: 'ja', invitedBy: null }));
    expect(ja.html).toContain('<html lang="ja" dir="ltr">');
    expect(ja.subject).toBe('Acme & "Co" の Team <script>alert(1)</script> への招待が届いています');
    expect(ja.text).toContain('Admin <b> として招待されました');
    expect(ja.text).toContain('招待を承諾する');
    expect(ja.text).toContain('7 日後');
    expect(ja.html).toContain('Admin &lt;b&gt;');
    expect(ja.html).not.toMatch(/<script|<b>/);
  });

  it.each(SUPPORTED_LOCALES)('renders in %s, with and without an inviter, in the locale (not English)', (lng) => {
    const english = invitations.render(mail());
    for (const invitedBy of ['Ada', null]) {
      const r = invitations.render(mail({ locale: lng, invitedBy }));
      expect(r.html).toContain(`<html lang="${lng}" dir="${lng === 'ar' || lng === 'he' ? 'rtl' : 'ltr'}">`);
      expect(r.subject).toContain('Team <script>alert(1)</script>');
      expect(r.text).toContain('Admin <b>');
      expect(r.text).toContain('https://app.example.com/cb?tollgate_invitation=tok&x=<1>');
      expect(r.html).not.toMatch(/<script|<b>/);
      expect(r.text + r.html).not.toMatch(/\{\{|\}\}/);
      if (invitedBy) expect(r.subject).toContain('Ada');
      if (lng !== 'en') expect(r.subject).not.toBe(english.subject);
    }
  });

  it('is an outbox topic of Tollgate, its payload checked', () => {
    expect(TOLLGATE_TOPICS.map((d) => d.topic.name)).toContain(ORGANIZATION_INVITATION_TOPIC.name);
    expect(organizationInvitationMailSchema.parse(JSON.parse(JSON.stringify(mail())))).toEqual(mail());
    expect(organizationInvitationMailSchema.safeParse({ ...mail(), locale: 'xx' }).success).toBe(false);
    expect(organizationInvitationMailSchema.safeParse({ ...mail(), invitedBy: undefined }).success).toBe(false);
  });
});

describe('the organization security notices', () => {
  const renderer = new I18nextEmailRenderer(locales);
  const notice = (over: Partial<SecurityNoticeMail>): SecurityNoticeMail => ({
    kind: 'organization_role_changed',
    locale: 'en',
    projectName: 'Acme',
    occurredAt: new Date('2030-03-04T05:06:07.000Z'),
    ip: null,
    device: null,
    method: null,
    organizationName: 'Research',
    role: 'Admin',
    ...over,
  });

  it('a role change names the organization and the role; a removal, the organization; both tell when and what to do', () => {
    const changed = renderer.renderSecurityNotice(notice({}));
    expect(changed.subject).toBe('Your role in Research on Acme changed');
    expect(changed.text).toContain('Your role in Research on Acme is now Admin.');
    expect(changed.text).toContain('When: March 4, 2030');
    expect(changed.text).toContain('IP address: Unknown');
    expect(changed.text).toContain('If you expected this change, there is nothing to do.\nIf you did not expect it, contact an administrator of Research.');

    const removed = renderer.renderSecurityNotice(notice({ kind: 'organization_removed', role: null, locale: 'de' }));
    expect(removed.subject).toBe('Sie wurden aus Research bei Acme entfernt');
    expect(removed.text).toContain('Sie wurden aus Research bei Acme entfernt und haben keinen Zugriff mehr darauf.');
    expect(removed.text).toContain('wenden Sie sich an eine Administratorin oder einen Administrator von Research.');

    const he = renderer.renderSecurityNotice(notice({ locale: 'he' }));
    expect(he.html).toContain('<html lang="he" dir="rtl">');
    expect(he.text).toContain('התפקיד שלך ב-Research ב-Acme הוא עכשיו Admin.');
  });
});

describe('the outbox schema of security notices', () => {
  const base = {
    kind: 'password_changed',
    projectId: '00000000-0000-4000-8000-000000000001',
    userId: '00000000-0000-4000-8000-000000000002',
    occurredAt: '2030-01-01T10:00:00.000Z',
    ip: '203.0.113.4',
    userAgent: null,
    method: null,
  };

  it('reads a notice recorded before the organization kinds: no organization, no role, no passkey', () => {
    expect(securityNoticeSchema.parse(base)).toEqual({ ...base, organizationName: null, role: null, passkeyName: null });
  });

  it('an organization notice names its organization; a role change, the role', () => {
    const changed = { ...base, kind: 'organization_role_changed', ip: null, organizationName: 'Research', role: 'Admin', passkeyName: null };
    expect(securityNoticeSchema.parse(changed)).toEqual(changed);
    expect(securityNoticeSchema.parse({ ...changed, kind: 'organization_removed', role: null }).kind).toBe('organization_removed');
    expect(securityNoticeSchema.safeParse({ ...changed, role: null }).success).toBe(false);
    expect(securityNoticeSchema.safeParse({ ...changed, organizationName: null }).success).toBe(false);
    expect(securityNoticeSchema.safeParse({ ...changed, kind: 'organization_removed', organizationName: undefined }).success).toBe(false);
  });
});
