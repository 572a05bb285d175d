// Lines of the tracked sources longer than the formatter's width (biome.jsonc, 160): the formatter
// wraps code but not a long string, comment or template; those are wrapped by hand.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const LIMIT = 160;
const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '*.ts', '*.tsx', '*.mts', '*.mjs', '*.cjs', '*.js', '*.css'], { encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.startsWith('bin/cli-bundle') && !f.includes('/dist/'));
const long = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue; // deleted in the work tree
  }
  text.split('\n').forEach((line, i) => {
    if ([...line].length > LIMIT) long.push(`${file}:${i + 1}: ${[...line].length} characters`);
  });
}
if (long.length > 0) {
  console.error(`${long.length} lines over ${LIMIT} characters:\n${long.join('\n')}`);
  process.exit(1);
}
console.log(`line length: no line over ${LIMIT} characters in ${files.length} files`);
