// The MCP Inspector CLI (a second real client, the one the README tells
// newcomers to try) drives tabvisor over stdio.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { startPageServer, tabvisorBin, freshRuntimeDir, processesMentioning, waitFor } from './lib.mjs';

const run = promisify(execFile);
const cli = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, 'node_modules', '.bin', 'mcp-inspector');

async function inspector(runtimeDir, ...args) {
  const { stdout } = await run(cli, ['--cli', tabvisorBin, '--runtime-dir', runtimeDir, ...args], { timeout: 60000 });
  return JSON.parse(stdout);
}

test('MCP Inspector CLI: tools/list and tools/call', async () => {
  const pages = await startPageServer();
  const dir = freshRuntimeDir();
  try {
    const list = await inspector(dir, '--method', 'tools/list');
    assert.ok(list.tools.some((t) => t.name === 'browser_snapshot'));
    const nav = await inspector(dir, '--method', 'tools/call', '--tool-name', 'browser_navigate',
      '--tool-arg', `url=${pages.url}/login.html`);
    assert.equal(nav.isError, false);
    assert.equal(nav.structuredContent.title, 'Sign in');
    assert.equal(nav.structuredContent.status, 200);
    const ev = await inspector(dir, '--method', 'tools/call', '--tool-name', 'browser_evaluate',
      '--tool-arg', 'function=() => 6 * 7');
    assert.deepEqual(ev.structuredContent.result, { value: 42 });
    assert.ok(await waitFor(() => processesMentioning(dir).length === 0, 10000), 'nothing left running');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await pages.close();
  }
});
