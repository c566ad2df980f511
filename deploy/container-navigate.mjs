// container-navigate.mjs BASE PAGE_HOST - one real navigate through a tabvisor in a container
// (deploy/container-test.sh), over HTTP with the bearer token in $TV_TOKEN. BASE is the
// published address (http://127.0.0.1:PORT); PAGE_HOST is how the container reaches this
// machine's loopback (slirp4netns: 10.0.2.2), where the test page is served on 127.0.0.1.
// Checks /healthz without a token, /mcp refused without it, the page's title through
// browser_navigate with it, and /metrics counting the call. Exits non-zero with a reason.
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startPageServer, connectHttp, rawHttp, call, text } from '../tests/e2e/lib.mjs';

const [base, pageHost] = process.argv.slice(2);
const token = process.env.TV_TOKEN;
if (!base || !pageHost || !token) throw new Error('usage: TV_TOKEN=T container-navigate.mjs BASE PAGE_HOST');
const check = (ok, what) => { if (!ok) throw new Error(what); };

const health = await rawHttp(`${base}/healthz`, { method: 'GET' });
check(health.status === 200 && JSON.parse(health.body).status === 'ok', `/healthz: ${health.status} ${health.body}`);
const anon = await rawHttp(`${base}/mcp`, {
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
});
check(anon.status === 401, `/mcp without the token: ${anon.status}, want 401`);

const pages = mkdtempSync(join(tmpdir(), 'tv-ctr-pages-'));
const marker = `ctr-${randomBytes(6).toString('hex')}`;
writeFileSync(join(pages, 'index.html'), `<title>${marker}</title><h1>in a container</h1>`);
const site = await startPageServer(pages);
const auth = { Authorization: `Bearer ${token}` };
let client;
try {
  ({ client } = await connectHttp(`${base}/mcp`, { requestInit: { headers: auth } }));
  const url = `http://${pageHost}:${new URL(site.url).port}/index.html`;
  const r = await call(client, 'browser_navigate', { url });
  const t = text(r);
  check(!r.isError && t.includes(marker), `navigate to ${url} failed: ${t.slice(0, 500)}`);
  const m = await rawHttp(`${base}/metrics`, { method: 'GET', headers: auth });
  check(m.status === 200 && /tabvisor_tool_calls_total\{tool="browser_navigate",outcome="ok"\} 1\b/.test(m.body),
    `/metrics does not count the navigate: ${m.status} ${m.body.slice(0, 300)}`);
  console.log(`container-navigate: title ${marker} via ${url}; /healthz, 401 without token, /metrics ok`);
} finally {
  await client?.close();
  await site.close();
  rmSync(pages, { recursive: true, force: true });
}
