// Issue 36: a worker taken over by its page speaks raw CDP or BiDi on its
// own connection to the browser bridge (hostile-worker.mjs in a worker's
// place). Whatever it sends, every other session keeps working:
//  - finding 1 (Firefox): scoped commands act on its own user context only,
//    and no unsubscribe of its own removes the bridge's subscription;
//  - finding 4 (both): a command of millions of JSON values, or over the
//    size bound, costs the supervisor little and stalls nobody.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { call, text, onFirefox, serverEnv } from './lib.mjs';
import { startHostileServer, rssMb } from './hostile.mjs';

// A page server that remembers the headers of each request by path.
async function recordingServer() {
  const seen = new Map();
  const server = createServer((req, res) => {
    seen.set(new URL(req.url, 'http://x').pathname, req.headers);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>Probe</title><p>probe page</p>');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

// What a page sees of the settings a scoped command changes (as JSON text).
const PROBE = `(async () => JSON.stringify({
  tz: Intl.DateTimeFormat().resolvedOptions().timeZone,
  lang: navigator.language,
  orientation: screen.orientation.type,
  preload: window.__hostile || null,
  geolocation: (await navigator.permissions.query({ name: 'geolocation' })).state,
  coords: window.__hostile ? await new Promise((done) => navigator.geolocation.getCurrentPosition(
    (p) => done([p.coords.latitude, p.coords.longitude]), (e) => done('error ' + e.code), { timeout: 5000 })) : null,
  online: navigator.onLine,
}))()`;

const ok = (r) => { assert.equal(r.isError, false, text(r)); return r; };

test('a taken-over worker\'s scoped BiDi commands stay in its user context; it cannot unsubscribe the bridge', { skip: !onFirefox && 'Firefox only (BiDi)' }, async () => {
  const pages = await recordingServer();
  const srv = await startHostileServer();
  try {
    const c = srv.client;
    const probe = async (path) => {
      ok(await call(c, 'browser_navigate', { url: `${pages.url}${path}`, timeout: 15000 }));
      return JSON.parse(ok(await call(c, 'browser_evaluate', { function: `async () => ${PROBE}` })).structuredContent.result.value);
    };
    const before = await probe('/b-before');
    assert.notEqual(before.tz, 'Pacific/Kiritimati');
    assert.equal(before.preload, null);
    assert.notEqual(before.geolocation, 'granted');

    srv.arm({ scenario: 'scoped', pageUrl: pages.url, probe: PROBE });
    // The new session's worker is the hostile one: its start fails when it leaves.
    const hostileCall = call(c, 'browser_session_create', {}).catch((e) => e);
    const r = await srv.result(25000);
    assert.ok(r, `the hostile worker ran: ${srv.partialOfHostile()}`);
    assert.equal(r.failure, undefined, r.failure);
    assert.ok(r.own, JSON.stringify(r.steps));
    const refusals = r.steps.filter((s) => s.answer.error).map((s) => `${s.method}: ${s.answer.message}`);

    // Its own page shows every setting took effect there (the test can fail).
    assert.deepEqual(r.own, {
      tz: 'Pacific/Kiritimati', lang: 'fr-CA', orientation: 'landscape-secondary', preload: 'preloaded',
      geolocation: 'granted', coords: [12.5, 45.25], online: true,
    }, JSON.stringify(refusals));
    assert.equal(r.ownOnline, false, 'offline in its own user context');
    assert.equal(pages.seen.get('/hostile')['x-hostile'], 'yes', 'its extra header on its own request');

    // The unsubscribe spellings that would edit the bridge's subscription.
    for (const k of ['unsubscribeByUserContext', 'unsubscribeByContext', 'unsubscribeAll']) {
      assert.equal(r[k].type, 'error', `${k}: ${JSON.stringify(r[k])}`);
      assert.match(r[k].message, /tabvisor: the bridge refuses/);
    }
    assert.equal(r.unsubscribeOwn.type, 'success', `its own subscription by id: ${JSON.stringify(r.unsubscribeOwn)}`);

    // Another session, while the attacker is still connected: its page is
    // untouched and its navigation waits on events that still come.
    const t0 = Date.now();
    const during = await probe('/b-during');
    const navMs = Date.now() - t0;
    assert.deepEqual(during, before, 'another session sees none of it');
    assert.equal(pages.seen.get('/b-during')['x-hostile'], undefined, 'no extra header on another session\'s request');
    assert.ok(navMs < 10000, `another session's navigate and evaluate took ${navMs} ms`);

    srv.release();
    await hostileCall;
    // And after it is gone.
    assert.deepEqual(await probe('/b-after'), before);
  } catch (e) {
    console.log(srv.stderr().slice(-4000), srv.stderrOfHostile());
    throw e;
  } finally {
    srv.release();
    await srv.close();
    await pages.close();
  }
});

test('a worker\'s huge command costs the supervisor little; other sessions answer throughout', async () => {
  const pages = await recordingServer();
  // ASan keeps freed blocks in a quarantine (256 MB by default), which is
  // the sanitizer's memory, not the supervisor's: kept small here so the
  // resident size measures what the supervisor holds.
  const srv = await startHostileServer([], {
    env: serverEnv({ ASAN_OPTIONS: 'detect_leaks=1:quarantine_size_mb=4' }),
  });
  try {
    const c = srv.client;
    const b = ok(await call(c, 'browser_session_create', {})).structuredContent.sessionId;
    ok(await call(c, 'browser_navigate', { sessionId: b, url: `${pages.url}/b` }));
    const before = rssMb(srv.pid);

    // CDP: a browser-level command the bridge reads whole; BiDi: every
    // command is read. 24 MiB of values, then 64 MiB (over the bound).
    const method = onFirefox ? 'script.evaluate' : 'Target.createTarget';
    srv.arm({ scenario: 'huge', method, sizes: [24 << 20, 64 << 20] });
    // The new session's worker is the hostile one: its start fails when it leaves.
    const hostileCall = call(c, 'browser_session_create', {}).catch((e) => e);

    // Another session keeps answering while the worker sends.
    let done = false, worst = 0, calls = 0, peak = before;
    const resultP = srv.result().finally(() => { done = true; });
    while (!done) {
      const t = Date.now();
      ok(await call(c, 'browser_evaluate', { sessionId: b, function: '() => 1 + 1' }));
      worst = Math.max(worst, Date.now() - t);
      peak = Math.max(peak, rssMb(srv.pid));
      calls++;
    }
    const r = await resultP;
    assert.ok(r, 'the hostile worker ran');
    assert.equal(r.failure, undefined, r.failure);
    const [first, second] = r.steps;
    assert.match(first.answer.error ? first.answer.message : '', /more JSON values than any command of a worker needs/, JSON.stringify(first));
    assert.ok(!second || second.answer.closed, `over the size bound the connection is closed: ${JSON.stringify(second)}`);

    // Memory given back.
    let after = rssMb(srv.pid);
    for (let i = 0; i < 50 && after >= 64; i++) {
      await new Promise((res) => setTimeout(res, 200));
      ok(await call(c, 'browser_evaluate', { sessionId: b, function: '() => 1' }));
      after = rssMb(srv.pid);
    }
    console.log(`supervisor RSS: ${before.toFixed(1)} MB before, ${peak.toFixed(1)} MB at most during, ` +
      `${after.toFixed(1)} MB after; ${calls} calls of another session meanwhile, the slowest ${worst} ms; ` +
      `steps: ${JSON.stringify(r.steps.map((s) => ({ bytes: s.bytes, ms: s.ms, answer: s.answer })))}`);
    assert.ok(after < 64, `the supervisor holds ${after.toFixed(1)} MB after`);
    assert.ok(worst < 5000, `another session waited ${worst} ms`);
    srv.release();
    await hostileCall;
    ok(await call(c, 'browser_navigate', { sessionId: b, url: `${pages.url}/b-after` }));
  } catch (e) {
    console.log(srv.stderr().slice(-4000), srv.stderrOfHostile());
    throw e;
  } finally {
    srv.release();
    await srv.close();
    await pages.close();
  }
});
