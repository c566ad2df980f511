// A Chromium that dies right after it starts, every time (a missing
// capability, a broken profile): tabvisor backs off between starts and, after
// three young deaths in a row, fails calls at once with the reason, instead
// of restarting it hundreds of times while a call waits out its timeout. A
// browser that lives on resets the count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, startPageServer, call, text, waitFor } from './lib.mjs';

const pages = await startPageServer();
test.after(() => pages.close());

const realChromium = ['/usr/lib/chromium/chromium-headless-shell', '/usr/lib/chromium/chromium'].find(existsSync);

// A "Chromium" that is the real one, ended by SIGTRAP (what a failed CHECK
// raises) lifeMs after its start while the file `dir/die` exists: it answers
// the CDP pipe first, as in the loop that was seen (ready, then dead). A
// SIGKILL would not count: that comes from outside (e2e.faults kills
// Chromium 100 times in a row, and each next call must get a new one). Each start is counted in dir/starts.
function mortalChromium(dir, lifeMs) {
  const path = join(dir, 'chromium');
  writeFileSync(path, `#!/bin/bash
echo start >> '${dir}/starts'
if [ -e '${dir}/die' ]; then
  ( exec 3>&- 4>&- >/dev/null 2>&1; sleep ${lifeMs / 1000}; kill -TRAP $$ ) &
fi
exec '${realChromium}' "$@"
`);
  chmodSync(path, 0o755);
  return path;
}
const starts = (dir) => (existsSync(join(dir, 'starts')) ? readFileSync(join(dir, 'starts'), 'utf8').split('\n').filter(Boolean).length : 0);

test('a Chromium that keeps dying young: back-off, then calls fail at once with the reason; a healthy one resets it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tv-crashloop-'));
  writeFileSync(join(dir, 'die'), '');
  const srv = await startServer(['--chromium', mortalChromium(dir, 1500)]);
  try {
    const url = `${pages.url}/counter.html`;
    // Calls while Chromium keeps dying (one may work while a browser lives):
    // none waits for its timeout, and tabvisor soon gives up.
    const t0 = Date.now();
    let last = null;
    while (Date.now() - t0 < 20000) {
      const t = Date.now();
      last = await call(srv.client, 'browser_navigate', { url, timeout: 60000 });
      assert.ok(Date.now() - t < 15000, `one call took ${Date.now() - t} ms: ${text(last)}`);
      if (/exited within 10 s of its start \d+ times in a row/.test(text(last))) break;
    }
    assert.match(text(last), /exited within 10 s of its start \d+ times in a row .*browser\.log/, text(last));
    assert.equal(last.structuredContent.error.code, 'BROWSER_ERROR', text(last));
    const during = starts(dir);
    assert.ok(during >= 3 && during <= 8, `${during} starts before tabvisor gave up`);

    // Within the back-off a call fails at once, with no new start.
    const t = Date.now();
    const r = await call(srv.client, 'browser_navigate', { url });
    assert.equal(r.isError, true, text(r));
    assert.ok(Date.now() - t < 1000, `refusal took ${Date.now() - t} ms`);
    assert.equal(starts(dir), during, 'a start happened during the back-off');

    // Chromium healthy again: once the back-off is over, calls work.
    rmSync(join(dir, 'die'));
    const ok = await waitFor(async () => {
      const x = await call(srv.client, 'browser_navigate', { url });
      return x.isError ? null : x;
    }, 20000, 500);
    assert.ok(ok, 'no call worked after Chromium was healthy again');
    assert.match(srv.stderr(), /died young \(1 in a row\)/);
  } finally {
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
