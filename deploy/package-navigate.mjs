// package-navigate.mjs ROOT - one real navigate through a tabvisor unpacked from the .deb
// under ROOT (deploy/package-test.sh). Proves the installed layout works: bin/tabvisor
// finds its worker in libexec/tabvisor (the worker that served the call is that file),
// and the page's title comes back. Exits non-zero with a reason on any failure.
import { mkdtempSync, writeFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

const root = process.argv[2];
if (!root) throw new Error('usage: package-navigate.mjs ROOT');
process.env.TABVISOR_BIN = join(root, 'usr/bin/tabvisor');
const { startServer, startPageServer, call, text } = await import('../tests/e2e/lib.mjs');

const pages = mkdtempSync(join(tmpdir(), 'tv-pkg-pages-'));
const marker = `pkg-${randomBytes(6).toString('hex')}`;
writeFileSync(join(pages, 'index.html'), `<title>${marker}</title><h1>installed</h1>`);
const site = await startPageServer(pages);
const srv = await startServer([]);
try {
  const r = await call(srv.client, 'browser_navigate', { url: `${site.url}/index.html` });
  const t = text(r);
  if (r.isError || !t.includes(marker)) throw new Error(`navigate failed: ${t.slice(0, 500)}`);
  const want = join(root, 'usr/libexec/tabvisor/tabvisor-worker');
  const exes = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try { exes.push(readlinkSync(`/proc/${pid}/exe`)); } catch { /* gone or not ours */ }
  }
  if (!exes.includes(want)) throw new Error(`no worker running from ${want}`);
  console.log(`package-navigate: title ${marker} via ${want}`);
} catch (e) {
  console.error(srv.stderr().slice(-3000));
  throw e;
} finally {
  await srv.close();
  await site.close();
  rmSync(pages, { recursive: true, force: true });
}
