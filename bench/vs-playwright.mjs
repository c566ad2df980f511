#!/usr/bin/env node
// bench/vs-playwright.mjs - tabvisor side by side with @playwright/mcp, in one
// run, on the same pages, the same Chromium binary and the same machine.
//
// Both servers are started the way an MCP client starts them: the official
// MCP SDK stdio client spawns the process (tabvisor: build-release/tabvisor;
// Playwright: bench/node_modules/@playwright/mcp/cli.js with --headless
// --isolated --executable-path <Debian's Chromium> --no-sandbox). Pages come
// from tests/pages on 127.0.0.1. Every figure is a wall-clock round trip as
// the client sees it.
//
//   snapshot  browser_snapshot of bigtable.html (2,500 rows) and
//             buttons.html (2,000 buttons): median of N after 2 unmeasured
//             calls; size in bytes (UTF-8) of the snapshot text (the YAML
//             inside the response) and of the whole response text;
//   click     browser_click by ref on counter.html's Increment button
//             (static page), median of N after 3 unmeasured clicks. Each
//             click is checked afterwards (the counter must equal the number
//             of clicks). Playwright's click response includes a snapshot of
//             the page; tabvisor's includes one only if asked (`snapshot`
//             argument, when the catalog has it), so tabvisor is measured
//             without and, when possible, with the snapshot.
//
// Run: ./bench/vs-playwright.sh (installs @playwright/mcp into bench/ and
// builds the release preset if needed). Output: a table and one line
// `VS_JSON {...}`.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { execFileSync } from 'node:child_process';
import { encode } from 'gpt-tokenizer';
import {
  chromiumBin, chromiumVersion, connectStdio, here, median, refOf, resultText, startPageServer, tabvisorBin,
} from './common.mjs';

const playwrightCli = join(here, 'node_modules', '@playwright', 'mcp', 'cli.js');
const N_SNAPSHOT = Number(process.env.N_SNAPSHOT || 10);
const N_CLICK = Number(process.env.N_CLICK || 30);

const bytes = (s) => Buffer.byteLength(s, 'utf8');
// Tokens as a model pays them: OpenAI's o200k_base encoding (gpt-tokenizer).
const tokens = (s) => encode(s).length;

// One MCP server under test: {name, client, hasArg(tool, arg), close()}.
async function startMcp(name, command, args, cwd, env) {
  const { client, log } = await connectStdio({ clientName: 'tabvisor-vs-playwright', command, args, cwd, env });
  const { tools } = await client.listTools();
  const schema = new Map(tools.map((t) => [t.name, t.inputSchema?.properties || {}]));
  return {
    name,
    client,
    log,
    tools,
    hasArg: (tool, arg) => Object.hasOwn(schema.get(tool) || {}, arg),
    close: () => client.close(),
  };
}

async function callOk(srv, tool, args) {
  const r = await srv.client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120000 });
  const txt = resultText(r);
  if (r.isError) throw new Error(`${srv.name} ${tool} failed: ${txt}\n${srv.log().slice(-2000)}`);
  return { r, txt };
}

// The YAML snapshot inside a response: tabvisor's structured `snapshot`
// field, else the first ```yaml block of the text (Playwright's format).
function snapshotText(r, txt) {
  if (typeof r.structuredContent?.snapshot === 'string') return r.structuredContent.snapshot;
  const m = txt.match(/```yaml\n([\s\S]*?)\n```/);
  return m ? m[1] : '';
}

// tabvisor cuts snapshots at maxChars (default 200,000): lift the cap so
// both servers return the whole page.
async function measureSnapshot(srv, url) {
  const args = srv.hasArg('browser_snapshot', 'maxChars') ? { maxChars: 10000000 } : {};
  await callOk(srv, 'browser_navigate', { url });
  for (let i = 0; i < 2; i++) await callOk(srv, 'browser_snapshot', args);
  const times = [];
  let last;
  for (let i = 0; i < N_SNAPSHOT; i++) {
    const t0 = performance.now();
    last = await callOk(srv, 'browser_snapshot', args);
    times.push(performance.now() - t0);
  }
  const snap = snapshotText(last.r, last.txt);
  if (!snap) throw new Error(`${srv.name}: no snapshot text for ${url}`);
  if (last.r.structuredContent?.truncated) throw new Error(`${srv.name}: snapshot of ${url} was truncated`);
  return { ms: median(times), snapshotBytes: bytes(snap), responseBytes: bytes(last.txt), lines: snap.split('\n').length };
}

// Clicks Increment by ref; `extra` is merged into the click arguments.
async function measureClick(srv, url, extra) {
  await callOk(srv, 'browser_navigate', { url });
  const { r, txt } = await callOk(srv, 'browser_snapshot', {});
  const ref = refOf(snapshotText(r, txt), 'button', 'Increment');
  if (!ref) throw new Error(`${srv.name}: no Increment button ref`);
  const args = { target: ref, element: 'Increment button', ...extra };
  for (let i = 0; i < 3; i++) await callOk(srv, 'browser_click', args);
  const times = [];
  let responseBytes = 0;
  for (let i = 0; i < N_CLICK; i++) {
    const t0 = performance.now();
    const res = await callOk(srv, 'browser_click', args);
    times.push(performance.now() - t0);
    responseBytes = bytes(res.txt);
    if (process.env.SHOW_CLICK && i === 0) console.log(`${srv.name} click response:\n${res.txt}\n`);
  }
  const check = await callOk(srv, 'browser_evaluate', { function: "() => document.getElementById('count').textContent" });
  if (!check.txt.includes(String(N_CLICK + 3))) {
    throw new Error(`${srv.name}: counter is not ${N_CLICK + 3} after the clicks: ${check.txt}`);
  }
  return { ms: median(times), min: Math.min(...times), responseBytes };
}

async function main() {
  if (!existsSync(playwrightCli)) throw new Error('bench/node_modules/@playwright/mcp is missing: run ./bench/vs-playwright.sh');
  if (!existsSync(tabvisorBin)) throw new Error(`${tabvisorBin} is missing: build the release preset`);
  const pages = await startPageServer();
  const scratch = mkdtempSync(join(process.env.TVBENCH_TMP || tmpdir(), 'vspw-'));
  const pwVersion = JSON.parse(readFileSync(join(here, 'node_modules', '@playwright', 'mcp', 'package.json'), 'utf8')).version;
  const servers = [];
  try {
    // --max-output-chars (default 40,000) bounds every result; lift it, as
    // Playwright's snapshot responses are not bounded. Older builds lack it.
    const tvHelp = execFileSync(tabvisorBin, ['--help'], { encoding: 'utf8' });
    const tvArgs = ['--runtime-dir', join(scratch, 'tv'), '--output-dir', join(scratch, 'tv-out'),
      '--chromium', chromiumBin, '--log-level', 'warning'];
    if (tvHelp.includes('--max-output-chars')) tvArgs.push('--max-output-chars', '10000000');
    servers.push(await startMcp('tabvisor', tabvisorBin, tvArgs, scratch));
    // Playwright MCP writes snapshots of navigations under its cwd, and its
    // Chromium its temp files (org.chromium.Chromium.*) under TMPDIR: both
    // go into scratch, which is removed at the end.
    const pwTmp = join(scratch, 'pw-tmp');
    mkdirSync(pwTmp, { recursive: true });
    const pwEnv = { ...process.env, TMPDIR: pwTmp };
    servers.push(await startMcp('playwright-mcp', process.execPath,
      [playwrightCli, '--headless', '--isolated', '--no-sandbox', '--executable-path', chromiumBin,
        '--output-dir', join(scratch, 'pw-out')], scratch, pwEnv));
    const results = {};
    // What the tool schemas cost, by default and with every group on.
    const [tvAll, pwAll] = [
      await startMcp('tabvisor --caps all', tabvisorBin, [...tvArgs, '--caps', 'all'], scratch),
      await startMcp('playwright-mcp --caps all', process.execPath, [playwrightCli, '--headless', '--isolated',
        '--caps=vision,pdf,testing,tracing,storage,network,devtools,config'], scratch, pwEnv)];
    const toolCost = (tools) => ({ count: tools.length, bytes: bytes(JSON.stringify(tools)), tokens: tokens(JSON.stringify(tools)) });
    const pwNames = servers[1].tools.map((t) => t.name);
    const tvNames = new Set(servers[0].tools.map((t) => t.name));
    const toolsets = {
      tabvisor: toolCost(servers[0].tools), 'playwright-mcp': toolCost(servers[1].tools),
      tabvisorAll: toolCost(tvAll.tools), playwrightAll: toolCost(pwAll.tools),
      pwDefaultMissing: pwNames.filter((n) => !tvNames.has(n)),
    };
    await tvAll.close();
    await pwAll.close();
    for (const srv of servers) {
      const res = {};
      res.bigtable = await measureSnapshot(srv, `${pages.url}/bigtable.html`);
      res.buttons = await measureSnapshot(srv, `${pages.url}/buttons.html`);
      if (srv.name === 'tabvisor' && srv.hasArg('browser_click', 'snapshot')) {
        res.click = await measureClick(srv, `${pages.url}/counter.html`, { snapshot: 'none' });
        res.clickWithSnapshot = await measureClick(srv, `${pages.url}/counter.html`, { snapshot: 'full' });
      } else {
        res.click = await measureClick(srv, `${pages.url}/counter.html`, {});
      }
      results[srv.name] = res;
    }
    printTable(results, toolsets, pwVersion);
    console.log('VS_JSON ' + JSON.stringify({
      chromium: chromiumVersion() ?? 'unknown', playwrightMcp: pwVersion, nSnapshot: N_SNAPSHOT, nClick: N_CLICK, results, toolsets,
    }));
  } finally {
    for (const s of servers) await s.close().catch(() => {});
    await pages.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

// "0.36x the size (goal <= 0.5x: met)": issue 8's size goals per page.
function sizeRatio(tv, pw, goal) {
  const r = tv.snapshotBytes / pw.snapshotBytes;
  return `${r.toFixed(2)}x (goal <= ${goal}x: ${r <= goal ? 'met' : 'not met'})`;
}

function printTable(res, ts, pwVersion) {
  const tv = res.tabvisor;
  const pw = res['playwright-mcp'];
  const f = (x, d = 1) => x.toFixed(d);
  const ratio = (a, b) => `${f(a / b, 2)}x`;
  const rows = [
    ['tools offered by default', ts.tabvisor.count, ts['playwright-mcp'].count,
      ts.pwDefaultMissing.length ? `missing: ${ts.pwDefaultMissing.join(', ')}` : 'a superset'],
    ['  tools/list JSON, bytes', ts.tabvisor.bytes, ts['playwright-mcp'].bytes, ratio(ts.tabvisor.bytes, ts['playwright-mcp'].bytes)],
    ['  tools/list, tokens (o200k_base)', ts.tabvisor.tokens, ts['playwright-mcp'].tokens, ratio(ts.tabvisor.tokens, ts['playwright-mcp'].tokens)],
    ['tools with every group on (--caps all)', ts.tabvisorAll.count, ts.playwrightAll.count, ''],
    ['  tools/list JSON, bytes', ts.tabvisorAll.bytes, ts.playwrightAll.bytes, ratio(ts.tabvisorAll.bytes, ts.playwrightAll.bytes)],
    ['  tools/list, tokens (o200k_base)', ts.tabvisorAll.tokens, ts.playwrightAll.tokens, ratio(ts.tabvisorAll.tokens, ts.playwrightAll.tokens)],
    ['snapshot bigtable.html (2,500 rows), median ms', f(tv.bigtable.ms), f(pw.bigtable.ms), `${f(pw.bigtable.ms / tv.bigtable.ms)}x faster`],
    ['  snapshot text, bytes', tv.bigtable.snapshotBytes, pw.bigtable.snapshotBytes, sizeRatio(tv.bigtable, pw.bigtable, 0.5)],
    ['snapshot buttons.html (2,000 buttons), median ms', f(tv.buttons.ms), f(pw.buttons.ms), `${f(pw.buttons.ms / tv.buttons.ms)}x faster`],
    ['  snapshot text, bytes', tv.buttons.snapshotBytes, pw.buttons.snapshotBytes, sizeRatio(tv.buttons, pw.buttons, 0.7)],
    [`click by ref, static page, median ms${tv.clickWithSnapshot ? ' (tabvisor: snapshot none)' : ''}`,
      f(tv.click.ms), f(pw.click.ms), `${f(pw.click.ms / tv.click.ms)}x faster`],
  ];
  if (tv.clickWithSnapshot) {
    rows.push(['click by ref, median ms (tabvisor: snapshot full)', f(tv.clickWithSnapshot.ms), f(pw.click.ms),
      `${f(pw.click.ms / tv.clickWithSnapshot.ms)}x faster`]);
  }
  rows.push(['  click response text, bytes', tv.click.responseBytes, pw.click.responseBytes, '']);
  if (tv.clickWithSnapshot) {
    rows.push(['  click response text with snapshot full, bytes', tv.clickWithSnapshot.responseBytes, pw.click.responseBytes, '']);
  }
  const w = [Math.max(...rows.map((r) => String(r[0]).length)), 10, 16, 16];
  const pad = (r) => r.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  ');
  console.log(pad(['', 'tabvisor', `playwright-mcp ${pwVersion}`, 'tabvisor is']));
  for (const r of rows) console.log(pad(r));
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
