// --browser-mode cdp with an endpoint given by host name (http://chrome:9222 in a container
// network or a Kubernetes Service). Chromium answers DevTools requests only when their Host
// header is an IP address or "localhost", so tabvisor must send the address the name
// resolved to. A name that resolves to loopback is needed without touching /etc/hosts: this
// machine's host name when it resolves to a 127.x address (Debian maps it to 127.0.1.1 or
// 127.0.0.1); the test is skipped when it does not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir, hostname } from 'node:os';
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import { startServer, startPageServer, call, text, rawHttp, waitFor } from './lib.mjs';

const chromium = process.env.TABVISOR_CHROMIUM
  || spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).stdout.trim();
const name = hostname();
const addr = await lookup(name, { family: 4 }).then((r) => r.address, () => '');
const skip = /^127\./.test(addr) && name !== 'localhost' ? false : `host name ${name} does not resolve to 127.x (${addr || 'no address'})`;

test(`cdp endpoint by name (${name} -> ${addr}): tabvisor connects where Chromium refuses the name as Host`, { skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tv-e2e-cdp-name-'));
  mkdirSync(join(dir, 'tmp'));
  const args = ['--headless', '--disable-gpu', '--no-first-run', `--remote-debugging-address=${addr}`,
    '--remote-debugging-port=0', `--user-data-dir=${dir}`, 'about:blank'];
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');
  const child = spawn(chromium, args, { stdio: 'ignore', detached: true, env: { ...process.env, HOME: dir, TMPDIR: join(dir, 'tmp') } });
  const pages = await startPageServer();
  try {
    const file = join(dir, 'DevToolsActivePort');
    assert.ok(await waitFor(() => existsSync(file) && readFileSync(file, 'utf8').split('\n').length >= 2, 20000), 'chromium started');
    const [port, wsPath] = readFileSync(file, 'utf8').split('\n');
    // The premise: Chromium refuses the name as Host, and takes the address.
    const byName = await rawHttp(`http://${addr}:${port}/json/version`, { method: 'GET', headers: { host: `${name}:${port}` } });
    assert.equal(byName.status, 500, `Chromium answered Host ${name}: ${byName.status} ${byName.body}`);
    assert.match(byName.body, /not an IP address or localhost/);
    for (const endpoint of [`http://${name}:${port}`, `ws://${name}:${port}${wsPath}`]) {
      const srv = await startServer(['--browser-mode', 'cdp', '--cdp-endpoint', endpoint]);
      try {
        const r = await call(srv.client, 'browser_navigate', { url: `${pages.url}/counter.html` });
        assert.ok(!r.isError, `${endpoint}: ${text(r)}`);
        assert.match(text(r), /Counter/);
      } finally {
        await srv.close();
      }
    }
  } finally {
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    await pages.close();
    await waitFor(() => child.exitCode !== null || child.signalCode !== null, 5000);
    rmSync(dir, { recursive: true, force: true });
  }
});
