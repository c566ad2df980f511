// Two MCP servers behind one interface, so a task written once runs through
// tabvisor and through @playwright/mcp (tests/e2e/package.json pins the
// version) with the same steps: the tasks suite runs every task on both and
// prints both results (tests/e2e/tasks.test.mjs).
//
// An agent is {name, tv, call(tool, args) -> result, snapshot(), close()};
// results are {isError, text, sc} (sc: tabvisor's structuredContent, {} for
// the peer). Arguments are written the tabvisor way; for the peer they are
// mapped to its schema: the two share target/startTarget/endTarget names,
// tabvisor-only options (clear, timeout, snapshot) are dropped, and a key
// press on a target clicks the target first, as a model using the peer would
// (its browser_press_key has no target).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startServer, call, text } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const peerCli = join(here, 'node_modules', '@playwright', 'mcp', 'cli.js');
const chromium = process.env.CHROMIUM_BIN || '/usr/lib/chromium/chromium';

// tabvisor: the server under test (lib.mjs's startServer), extra args added.
// TASKS_SESSIONS=N (N > 1): the agent keeps N sessions on the one server
// and nextSession() moves it to the next, so consecutive tasks run in
// different sessions that all stay open (each call names its sessionId).
export async function startTabvisor(extraArgs = []) {
  const srv = await startServer(extraArgs);
  const want = Number(process.env.TASKS_SESSIONS) || 1;
  const sessions = [];
  let at = 0;
  const withSession = (args) => (sessions.length ? { ...args, sessionId: sessions[at] } : args);
  return {
    name: 'tabvisor',
    tv: true,
    srv,
    // The session the agent is in: undefined for the connection's default.
    get sessionId() { return sessions[at]; },
    async nextSession() {
      if (want < 2) return;
      while (sessions.length < want) {
        const r = await call(srv.client, 'browser_session_create', {});
        if (r.isError) throw new Error(`session_create: ${text(r)}`);
        sessions.push(r.structuredContent.sessionId);
      }
      at = (at + 1) % sessions.length;
    },
    async call(tool, args = {}) {
      const r = await call(srv.client, tool, withSession(args));
      return { isError: !!r.isError, text: text(r), sc: r.structuredContent || {} };
    },
    async snapshot() {
      const r = await call(srv.client, 'browser_snapshot', withSession({}));
      if (r.isError) throw new Error(`snapshot: ${text(r)}`);
      return r.structuredContent.snapshot;
    },
    close: () => srv.close(),
  };
}

// Options only tabvisor has; the peer would refuse them.
const TV_ONLY = new Set(['clear', 'timeout', 'snapshot']);

// @playwright/mcp, headless and isolated, on Debian's Chromium; its output
// and temporary files go to a scratch directory removed by close().
export async function startPeer() {
  const scratch = mkdtempSync(join(tmpdir(), 'tv-peer-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [peerCli, '--headless', '--isolated', '--no-sandbox', '--executable-path', chromium,
      '--output-dir', join(scratch, 'out')],
    cwd: scratch,
    env: { ...process.env, TMPDIR: scratch },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'tabvisor-tasks', version: '1.0.0' });
  await client.connect(transport);
  const raw = async (tool, args) => {
    const r = await client.callTool({ name: tool, arguments: args });
    const t = (r.content || []).map((c) => c.text || '').join('\n');
    return { isError: !!r.isError || /^### Error/m.test(t), text: t, sc: {} };
  };
  const agent = {
    name: 'playwright-mcp',
    tv: false,
    scratch,
    async call(tool, args = {}) {
      const a = Object.fromEntries(Object.entries(args).filter(([k]) => !TV_ONLY.has(k)));
      if (tool === 'browser_drag') {
        a.startTarget = a.startTarget ?? a.startRef;
        a.endTarget = a.endTarget ?? a.endRef;
        delete a.startRef;
        delete a.endRef;
      }
      if (tool === 'browser_wait_for' && args.time === undefined) return peerWait(raw, args);
      if (tool === 'browser_press_key' && a.target) {
        const clicked = await raw('browser_click', { target: a.target, element: 'the element to press the key on' });
        if (clicked.isError) return clicked;
        delete a.target;
      }
      if (a.target && !a.element && tool !== 'browser_snapshot') a.element = 'the element';
      const r = await raw(tool, a);
      if (tool === 'browser_evaluate' && !r.isError) {
        const m = r.text.match(/### Result\n([\s\S]*?)\n### /) || r.text.match(/### Result\n([\s\S]*)$/);
        r.sc = { result: { value: m ? parseJsonOrText(m[1].trim()) : undefined } };
      }
      return r;
    },
    async snapshot() {
      const r = await raw('browser_snapshot', {});
      if (r.isError) throw new Error(`snapshot: ${r.text}`);
      const m = r.text.match(/```yaml\n([\s\S]*?)\n```/);
      return m ? m[1] : '';
    },
    async close() {
      await client.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
  return agent;
}

// The peer's browser_wait_for gives up after its own 5 s and waits only for
// text: a model using it calls it again until its patience (timeout) runs
// out, and watches the URL or an element by reading the page.
async function peerWait(raw, { text, textGone, url, target, timeout = 10000 }) {
  const end = Date.now() + timeout;
  const named = target?.match(/^role=\w+\[name="(.*)"\]$/);
  if (named) [text, target] = [named[1], undefined];
  let last;
  for (;;) {
    if (text !== undefined || textGone !== undefined) {
      last = await raw('browser_wait_for', text !== undefined ? { text } : { textGone });
    } else {
      const fn = url !== undefined
        ? `() => new RegExp(${JSON.stringify(globToRegExp(url))}).test(location.href)`
        : `() => !!document.querySelector(${JSON.stringify(target)})`;
      last = await raw('browser_evaluate', { function: fn });
      if (!last.isError && !/### Result\ntrue/.test(last.text)) last.isError = true;
    }
    if (!last.isError || Date.now() >= end) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
}

// A URL glob as browser_wait_for takes it (** any, * any but /) as a RegExp source.
function globToRegExp(glob) {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*' && glob[i + 1] === '*') { re += '.*'; i++; } else if (ch === '*') re += '[^/]*';
    else re += ch.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return `^${re}$`;
}

function parseJsonOrText(s) {
  try { return JSON.parse(s); } catch { return s; }
}
