// The README's list of toolgate's tables is the one the migrator checks a database against
// (src/db/toolgate-tables.ts), and says which the legacy application had too: neither can gain or
// lose a table alone.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { TOOLGATE_TABLES } from '../../src/db/toolgate-tables';

const readme = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
const section = readme.split(/^## /m).find((s) => s.startsWith('Tables\n')) ?? '';
// The first table of the section: its header and |---| line go, each other row names tables.
const cells = section
  .split('\n')
  .filter((line) => line.startsWith('|'))
  .slice(2)
  .map((row) => row.split('|')[1]!);

test("when the README's Tables section is read beside TOOLGATE_TABLES, then it lists the same tables, and marks legacy exactly the adoptable ones", () => {
  const listed = cells.flatMap((cell) =>
    [...cell.matchAll(/`([a-z_]+)`( \(\*\*legacy\*\*\))?/g)].map((m) => ({ name: m[1]!, adoptable: m[2] !== undefined })),
  );
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
  expect(listed.sort(byName)).toEqual(TOOLGATE_TABLES.map(({ name, adoptable }) => ({ name, adoptable })).sort(byName));
});
