import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, PeerServer } from '../support/peer-server';

let peer: PeerServer;

beforeAll(async () => {
  peer = await PeerServer.start('FakeThing', {
    'GET /ok': () => json(200, { ok: true }),
    'POST /form': (req) => json(200, { name: req.form().get('name') }),
    'GET /broken': () => {
      throw new Error('set nextLogin first');
    },
  });
});
afterAll(() => peer?.close());

describe('PeerServer (the base of the GitHub, Discord and SMS look-alikes)', () => {
  it('routes by method and path, reads forms, and records each request', async () => {
    expect(await (await fetch(`${peer.baseUrl}/ok?x=1`)).json()).toEqual({ ok: true });
    const res = await fetch(`${peer.baseUrl}/form`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Ada',
    });
    expect(await res.json()).toEqual({ name: 'Ada' });
    expect(peer.calls.slice(-2)).toEqual(['GET /ok', 'POST /form']);
    expect(peer.requests.at(-2)!.url.searchParams.get('x')).toBe('1');
    expect(() => peer.assertNoUnexpected()).not.toThrow();
  });

  it('answers an unknown route (or method) with 500 and reports it with its method and path, once', async () => {
    expect((await fetch(`${peer.baseUrl}/nope`)).status).toBe(500);
    expect((await fetch(`${peer.baseUrl}/ok`, { method: 'DELETE' })).status).toBe(500);
    expect(() => peer.assertNoUnexpected()).toThrow(/FakeThing received requests it cannot answer: GET \/nope \(no such route\); DELETE \/ok/);
    expect(() => peer.assertNoUnexpected()).not.toThrow();
  });

  it('reports a route that throws', async () => {
    expect((await fetch(`${peer.baseUrl}/broken`)).status).toBe(500);
    expect(() => peer.assertNoUnexpected()).toThrow(/GET \/broken \(set nextLogin first\)/);
  });
});
