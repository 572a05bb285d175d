import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The OpenID Provider peer (test/support/oidc-provider.ts) loads and starts without oidc-provider's
 * expected warnings (Node 20 is not the LTS it names; its in-memory adapter), which otherwise print
 * once per test file that uses it, and lets any other warning through. Run in a fresh Node process,
 * as a test file's first import of oidc-provider is: the warning is printed when the module loads.
 */
describe('OidcPeer output', () => {
  it('prints neither expected oidc-provider warning, and still prints other warnings', async () => {
    const script = `
      const { OidcPeer } = await import('./test/support/oidc-provider.ts');
      const peer = await OidcPeer.start();
      peer.configure('http://127.0.0.1:1');
      console.warn('another warning');
      await peer.close();
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, output).toBe(0);
    expect(output).not.toContain('Unsupported runtime');
    expect(output).not.toContain('in-memory adapter');
    expect(output).toContain('another warning');
  }, 60_000);
});
