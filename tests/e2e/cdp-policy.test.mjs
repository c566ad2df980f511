// The extension's copy of the CDP policy (extension/cdp_guard.js over the
// generated cdp_policy.js) answers as the C table does: every row of
// proto/cdp_policy.c, with the params each row looks at and the audit's URLs,
// as tv-cdp-policy-js --vectors prints cdp_policy_check's answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const extDir = process.env.TABVISOR_EXTENSION_DIR;
const gen = process.env.TABVISOR_CDP_POLICY_GEN;

test('the extension refuses what the table refuses for it, and passes what it passes', async () => {
  assert.ok(extDir && existsSync(join(extDir, 'cdp_policy.js')), 'the built extension has cdp_policy.js');
  const { cdpRefusal } = await import(pathToFileURL(join(extDir, 'cdp_guard.js')).href);
  const cases = JSON.parse(execFileSync(gen, ['--vectors'], { encoding: 'utf8' }));
  assert.ok(cases.length > 100, `${cases.length} cases`);
  let refused = 0;
  for (const c of cases) {
    const want = c.passes['the extension'];
    const why = cdpRefusal(c.method, c.params === null ? undefined : c.params);
    assert.equal(why === null, want, `${c.method} ${JSON.stringify(c.params)}: extension says ${why}`);
    if (!want) refused++;
  }
  assert.ok(refused > 20, `${refused} refusals`);
  // The audit's commands, spelled out.
  for (const [m, p] of [['DOM.setFileInputFiles', { files: ['/etc/shadow'], nodeId: 1 }],
    ['Storage.getCookies', {}], ['Network.getAllCookies', {}], ['Network.clearBrowserCookies', {}],
    ['Network.getCookies', { urls: ['https://bank.example/'] }], ['Page.navigate', { url: ' file:///etc/passwd' }],
    ['Page.navigate', { url: 'data:text/html,x' }], ['Target.createTarget', { url: 'about:blank' }]]) {
    assert.notEqual(cdpRefusal(m, p), null, m);
  }
  assert.equal(cdpRefusal('Runtime.evaluate', { expression: '1' }), null);
  assert.equal(cdpRefusal('Page.navigate', { url: 'HTTPS://x/' }), null);
});
