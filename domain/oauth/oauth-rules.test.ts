import { describe, expect, it } from 'vitest';
import { decideAccount, type AccountDecisionInput } from './linking';
import { callbackRedirectUrl } from './redirect';

const profile = { providerUserId: 'p1', email: 'a@example.com', emailVerified: true, name: null, picture: null };
const candidate = { userId: 'u1', emailVerified: true, disabled: false, providers: ['google'] };
const base: AccountDecisionInput = {
  provider: 'github',
  allowAccountLinking: true,
  profile,
  identityUserId: null,
  linkToUserId: null,
  emailCandidates: [candidate],
};

describe('decideAccount', () => {
  it('signs a known identity in, whatever the setting', () => {
    expect(decideAccount({ ...base, identityUserId: 'u9' })).toEqual({ kind: 'existing', userId: 'u9' });
    expect(decideAccount({ ...base, allowAccountLinking: false, identityUserId: 'u9' })).toEqual({ kind: 'existing', userId: 'u9' });
  });

  it('linking off: a new identity always creates a user', () => {
    expect(decideAccount({ ...base, allowAccountLinking: false })).toEqual({ kind: 'create' });
    expect(decideAccount({ ...base, allowAccountLinking: false, linkToUserId: 'u1' })).toEqual({ kind: 'create' });
  });

  it('email-based: links only verified to verified, to exactly one eligible user', () => {
    expect(decideAccount(base)).toEqual({ kind: 'link', userId: 'u1' });
    expect(decideAccount({ ...base, profile: { ...profile, emailVerified: false } })).toEqual({ kind: 'create' });
    expect(decideAccount({ ...base, emailCandidates: [{ ...candidate, emailVerified: false }] })).toEqual({ kind: 'create' });
    expect(decideAccount({ ...base, emailCandidates: [{ ...candidate, disabled: true }] })).toEqual({ kind: 'create' });
    expect(decideAccount({ ...base, emailCandidates: [{ ...candidate, providers: ['github'] }] })).toEqual({ kind: 'create' });
    expect(decideAccount({ ...base, emailCandidates: [candidate, { ...candidate, userId: 'u2' }] })).toEqual({ kind: 'create' });
  });

  it('explicit: joins the target, never moves an identity owned by someone else', () => {
    expect(decideAccount({ ...base, linkToUserId: 'u5', emailCandidates: [] })).toEqual({ kind: 'link', userId: 'u5' });
    expect(decideAccount({ ...base, linkToUserId: 'u5', identityUserId: 'u5' })).toEqual({ kind: 'existing', userId: 'u5' });
    expect(decideAccount({ ...base, linkToUserId: 'u5', identityUserId: 'u6' })).toEqual({ kind: 'conflict' });
  });
});

describe('callbackRedirectUrl', () => {
  it('appends code and state, keeping the registered URL byte for byte', () => {
    expect(callbackRedirectUrl('https://app.example/cb', 'c1', 's 1/&')).toBe('https://app.example/cb?code=c1&state=s+1%2F%26');
    expect(callbackRedirectUrl('https://app.example/cb?tenant=A%20B', 'c1', null)).toBe('https://app.example/cb?tenant=A%20B&code=c1');
  });
});
