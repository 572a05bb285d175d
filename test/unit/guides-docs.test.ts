import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The guides are run as written, after the README and the guides before them (in the README's
 * order), in one shell. What can be checked without a server: every shell variable a command uses
 * is set by a command before it, no answer is pasted among the commands, no walkthrough signs up
 * an address that an earlier one registered, no command needs a tool a plain Debian lacks, and the
 * `field` helper stops with a message instead of handing `undefined` to the next command.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** README.md, then the guides its "Guides:" line links, in that order. */
const walk = (): string[] => {
  const readme = read('README.md');
  const guides = readme.slice(readme.indexOf('Guides:'), readme.indexOf('\n## ', readme.indexOf('Guides:')));
  return ['README.md', ...new Set([...guides.matchAll(/\]\((docs\/[\w-]+\.md)\)/g)].map((m) => m[1]!))];
};

/** The ```sh blocks of a file, each with its first line number. */
const shellBlocks = (file: string) =>
  [...read(file).matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => ({ file, line: read(file).slice(0, m.index).split('\n').length + 1, code: m[1]! }));

/** A transcript shows commands after `$ ` with their output; other blocks are commands only. */
const isTranscript = (code: string) => /^\$ /m.test(code);

/** The code of a block less its comments (a `#` at a line's start or after a space, outside quotes is close enough here). */
const withoutComments = (code: string) =>
  code
    .split('\n')
    .map((l) => l.replace(/(^|\s)#(?![^'"]*['"][^'"]*$).*$/, ''))
    .join('\n');

/**
 * Inputs a recipe names rather than sets: the values a webhook receiver has in hand
 * (webhooks.md's "by hand" signature check).
 */
const RECIPE_INPUTS: Record<string, string[]> = { 'docs/webhooks.md': ['TIMESTAMP', 'RAW_BODY', 'SECRET'] };

describe('the README and the guides, in the README order', () => {
  const files = walk();

  it('are the README and at least the walkthrough guides', () => {
    expect(files.slice(0, 6)).toEqual(['README.md', 'docs/email.md', 'docs/oauth.md', 'docs/mfa.md', 'docs/sessions.md', 'docs/billing.md']);
  });

  it('use no shell variable that no command before sets', () => {
    const set = new Set(['HOME', 'PATH', 'PWD', 'USER']);
    const unset: string[] = [];
    for (const file of files) {
      for (const block of shellBlocks(file)) {
        const code = withoutComments(block.code).replace(/^\$ /gm, '');
        // Assignments (NAME=..., export A=.. B=..., local NAME=...), loop variables, read targets.
        const defines = [
          ...code.matchAll(/(?:^|[\s;(&|])(?:export\s+|local\s+)?([A-Za-z_]\w*)=/g),
          ...code.matchAll(/\bfor\s+([A-Za-z_]\w*)\s+in\b/g),
          ...code.matchAll(/\bread\s+(?:-\w+\s+)*([A-Za-z_]\w*)/g),
        ];
        const uses = [...code.matchAll(/\$\{?([A-Za-z_]\w*)/g)];
        // In order of appearance: a use before its assignment in the same block is a use of an unset name.
        const events = [
          ...defines.map((m) => ({ at: m.index!, name: m[1]!, define: true })),
          ...uses.map((m) => ({ at: m.index!, name: m[1]!, define: false })),
        ].sort((a, b) => a.at - b.at || Number(b.define) - Number(a.define));
        for (const event of events) {
          if (event.define) set.add(event.name);
          else if (!set.has(event.name) && !RECIPE_INPUTS[file]?.includes(event.name)) unset.push(`${file}:${block.line}: $${event.name}`);
        }
      }
    }
    expect(unset).toEqual([]);
  });

  it('paste no answer among the commands: answers are comments, or follow `$ ` commands in a transcript', () => {
    const pasted = files.flatMap((file) =>
      shellBlocks(file)
        .filter((block) => !isTranscript(block.code))
        .flatMap((block) => block.code.split('\n').flatMap((l, i) => (/^\s*(\{|\[\s*[{"\d])/.test(l) ? [`${file}:${block.line + i}: ${l.slice(0, 60)}`] : []))),
    );
    expect(pasted).toEqual([]);
  });

  it('sign each address up once: a walkthrough does not sign up an address the README or an earlier guide registered', () => {
    const seen = new Map<string, string>();
    const again: string[] = [];
    for (const file of files) {
      for (const block of shellBlocks(file).filter((b) => !isTranscript(b.code))) {
        for (const command of block.code.split(/\n(?!\s)/).filter((c) => c.includes('/api/proxy/email/signup'))) {
          const email = /\\?"email\\?"\s*:\s*\\?"([^"\\]+)/.exec(command)?.[1];
          if (!email) continue;
          if (seen.has(email)) again.push(`${file}:${block.line}: ${email} (signed up in ${seen.get(email)})`);
          else seen.set(email, `${file}:${block.line}`);
        }
      }
    }
    expect(seen.size).toBeGreaterThan(3);
    expect(again).toEqual([]);
  });

  it('need no tool a plain Debian lacks (uuidgen: node -p "crypto.randomUUID()" instead)', () => {
    const needs = files.flatMap((file) => shellBlocks(file).flatMap((b) => (/\buuidgen\b/.test(withoutComments(b.code)) ? [`${file}:${b.line}`] : [])));
    expect(needs).toEqual([]);
  });
});

describe('the field helper of the walkthroughs', () => {
  const helpers = walk().flatMap((file) =>
    shellBlocks(file).flatMap((b) =>
      b.code
        .split('\n')
        .filter((l) => l.startsWith('field() {'))
        .map((definition) => ({ file, definition })),
    ),
  );
  const field = (definition: string, answer: string, name: string) =>
    spawnSync('bash', ['-c', `${definition}\nfield ${name}`], { input: answer, encoding: 'utf8', cwd: ROOT });

  it('is defined by the guides that read answers', () => {
    expect(helpers.map((h) => h.file)).toEqual(expect.arrayContaining(['docs/mfa.md', 'docs/billing.md']));
  });

  it('prints the field of an answer (a nested one too)', () => {
    for (const { file, definition } of helpers) {
      expect(field(definition, '{"token":"eyJ.x.y"}', 'token').stdout, file).toBe('eyJ.x.y\n');
      expect(field(definition, '{"price":{"id":"p_1"}}', 'price.id').stdout, file).toBe('p_1\n');
    }
  });

  it('stops with a message and a failing status when the answer has no such field, printing nothing', () => {
    for (const { file, definition } of helpers) {
      const refused = field(definition, '{"error":"An account with this email already exists","code":"email_already_registered"}', 'token');
      expect(refused.status, file).not.toBe(0);
      expect(refused.stdout, file).toBe('');
      expect(refused.stderr, file).toContain('No token in this answer');
      expect(field(definition, 'not json', 'price.id').status, file).not.toBe(0);
    }
  });

  it('stops a walkthrough run as a script (bash -e) at the failed read: no `Bearer undefined` is sent', () => {
    const { definition } = helpers.find((h) => h.file === 'docs/billing.md')!;
    const script = `${definition}\nTOKEN=$(echo '{"error":"x"}' | field token)\necho "sent Bearer $TOKEN"`;
    const run = spawnSync('bash', ['-e', '-c', script], { encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe('');
  });
});
