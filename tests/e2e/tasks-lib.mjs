// Helpers for tests/e2e/tasks.test.mjs: a static file server for pages that
// Debian packages install under /usr/share (URL path = file path, so the
// packages' absolute links such as /usr/share/javascript/jquery/jquery.js
// resolve as their authors meant), and snapshot parsing done the way a model
// reads a snapshot: by role and accessible name.
import { createServer } from 'node:http';
import { createReadStream, existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Only these trees are served; a path that leaves them (.., symlinks) is 404.
const roots = ['/usr/share/doc/', '/usr/share/javascript/', '/usr/share/nodejs/'];

// npm packages of tests/e2e/package.json that ship their own demo pages
// (dragula, selectric, pell, ...) are served under /npm/<package>/...; a
// scoped package's name has two segments (/npm/@zachleat/carouscroll/...).
export const npmRoot = join(dirname(fileURLToPath(import.meta.url)), 'node_modules');
export const npmPackages = ['dragula', 'selectric', 'pell', 'medium-editor', 'ckeditor4',
  '@zachleat/seven-minute-tabs', '@zachleat/carouscroll', 'simple-datatables', 'accessible-autocomplete',
  'jsoneditor', 'awesomplete', 'tablesort', 'nice-select2'];

// Debian packaging slips the pages depend on, mapped to where the file is
// really installed. libjs-jquery-ui-docs loads /usr/share/nodejs/require.js,
// but node-requirejs installs it one directory down.
const aliases = new Map([['/usr/share/nodejs/require.js', '/usr/share/nodejs/requirejs/require.js']]);
// node-pikaday ships its examples under /usr/share/doc, their script and
// styles (../pikaday.js, ../css/) under /usr/share/nodejs/pikaday.
const prefixAliases = [['/usr/share/doc/node-pikaday/pikaday.js', '/usr/share/nodejs/pikaday/pikaday.js'],
  ['/usr/share/doc/node-pikaday/css/', '/usr/share/nodejs/pikaday/css/'],
  ['/usr/share/doc/node-pikaday/plugins/', '/usr/share/nodejs/pikaday/plugins/']];
// simple-datatables' demos load ../dist/ as its repository's demo build lays
// it out (module.js, umd.js, css/); the npm package has the same files in
// its own dist/ (npm paths, after /npm/).
const npmPrefixAliases = [['simple-datatables/docs/demos/dist/css/', 'simple-datatables/dist/'],
  ['simple-datatables/docs/demos/dist/umd.js', 'simple-datatables/dist/umd/simple-datatables.js'],
  ['simple-datatables/docs/demos/dist/', 'simple-datatables/dist/']];
const byPrefix = (list, p) => list.reduce((q, [from, to]) => (q === p && p.startsWith(from) ? to + p.slice(from.length) : q), p);
const alias = (p) => aliases.get(p) || byPrefix(prefixAliases, p);

const types = {
  '.html': 'text/html; charset=utf-8', '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.gif': 'image/gif', '.jpg': 'image/jpeg', '.pdf': 'application/pdf',
  '.ttf': 'font/ttf', '.woff': 'font/woff', '.woff2': 'font/woff2',
  '.properties': 'text/plain; charset=utf-8', '.ftl': 'text/plain; charset=utf-8',
  '.bcmap': 'application/octet-stream', '.txt': 'text/plain; charset=utf-8',
};

// Resolve a URL path to a served file, or undefined. Directories give their
// index.html.
function resolveFile(pathname) {
  if (pathname.startsWith('/npm/')) return resolveNpm(pathname.slice(5));
  let p = alias(pathname);
  if (!roots.some((r) => p.startsWith(r)) || p.includes('\0')) return undefined;
  if (!existsSync(p)) return undefined;
  try {
    p = realpathSync(p);
    if (statSync(p).isDirectory()) p = realpathSync(`${p}/index.html`);
  } catch { return undefined; }
  // Debian symlinks doc assets into /usr/share/javascript and friends; all
  // of them stay inside /usr/share.
  if (!p.startsWith('/usr/share/') || !statSync(p).isFile()) return undefined;
  return p;
}

// A file of one of npmPackages, or undefined.
function resolveNpm(rest) {
  rest = byPrefix(npmPrefixAliases, rest);
  const parts = rest.split('/');
  const pkg = parts.slice(0, parts[0].startsWith('@') ? 2 : 1).join('/');
  if (!npmPackages.includes(pkg) || rest.includes('\0')) return undefined;
  try {
    const base = realpathSync(join(npmRoot, pkg));
    let p = realpathSync(join(npmRoot, rest));
    if (statSync(p).isDirectory()) p = realpathSync(join(p, 'index.html'));
    return p.startsWith(`${base}/`) && statSync(p).isFile() ? p : undefined;
  } catch { return undefined; }
}

// Serve the package trees on 127.0.0.1; resolves to {url, close}.
export async function startPackageServer() {
  const server = createServer((req, res) => {
    let pathname;
    try { pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname); } catch { pathname = ''; }
    const file = resolveFile(pathname);
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<title>Not found</title><h1>404</h1>');
      return;
    }
    res.writeHead(200, { 'content-type': types[extname(file)] || 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  };
}

// Every element of a snapshot: {role, name, states, ref, value, depth, line}.
// Reads `- role "name" [state] [ref=eN]: value` lines and items written
// inline in compact table rows, as a model reading the text would.
export function parseSnapshot(snapshot) {
  const out = [];
  // @playwright/mcp writes some states after the ref (`[ref=e3] [cursor=pointer]`).
  const head = /^(\s*)- ([\w-]+)(?: "((?:[^"\\]|\\.)*)")?((?: \[(?!ref=)[^\]]*\])*) \[ref=(\w+)\]((?: \[[^\]]*\])*)(?::(?: (.*))?)?$/;
  const inline = /(?:^|\s)([\w-]+)(?: "((?:[^"\\]|\\.)*)")?((?: \[(?!ref=)[^\]]*\])*) \[ref=(\w+)\]/g;
  const states = (s) => [...(s || '').matchAll(/\[([^\]]*)\]/g)].map((m) => m[1]);
  const name = (s) => (s === undefined ? '' : JSON.parse(`"${s}"`));
  for (const line of snapshot.split('\n')) {
    const m = line.match(head);
    if (!m) continue;
    // A value YAML had to quote (`: "Date:"`) is read back unquoted.
    const value = m[7] && /^".*"$/.test(m[7]) ? JSON.parse(m[7]) : m[7];
    out.push({ role: m[2], name: name(m[3]), states: [...states(m[4]), ...states(m[6])], ref: m[5], value, depth: m[1].length / 2, line, text: '' });
    // Items written inline in a compact table row's text.
    for (const i of (m[7] || '').matchAll(inline)) {
      out.push({ role: i[1], name: name(i[2]), states: states(i[3]), ref: i[4], value: undefined, depth: -1, line });
    }
  }
  // What each element holds, as a reader sees it under its line: the names,
  // values and text of the lines below it (@playwright/mcp leaves a name
  // out when it is the content's, as in `- tab [ref=e6]:` over
  // `- link "Proin dolor"`).
  const lines = snapshot.split('\n');
  const at = new Map(lines.map((l, i) => [l, i]));
  for (const e of out) {
    if (e.depth < 0) continue;
    const words = [];
    for (let i = at.get(e.line) + 1; i < lines.length; i++) {
      const l = lines[i];
      const indent = l.match(/^\s*/)[0].length / 2;
      if (indent <= e.depth) break;
      const m = l.match(/^\s*- (?:text: (.*)|[\w-]+(?: "((?:[^"\\]|\\.)*)")?[^:]*(?::(?: (.*))?)?)$/);
      if (!m || l.trim().startsWith('- /')) continue;
      for (const w of [m[1], m[2] && JSON.parse(`"${m[2]}"`), m[3]]) if (w) words.push(w.replace(/^"(.*)"$/, '$1'));
    }
    e.text = words.join(' ').replace(/\s+/g, ' ').trim();
  }
  return out;
}

// The elements with this role whose name matches (string: exact; RegExp:
// test). When none does, an unnamed one whose content (its text) matches, as
// a reader takes `- tab:` over `- link "Proin dolor"` for the tab
// "Proin dolor".
export function findAll(snapshot, role, name) {
  const all = parseSnapshot(snapshot).filter((e) => e.role === role);
  if (name === undefined) return all;
  const matches = (label) => (name instanceof RegExp ? name.test(label) : label === name);
  // A nameless element is read by its inline text (`- listitem: Item 1`).
  const named = all.filter((e) => matches(e.name) || (!e.name && e.value !== undefined && matches(e.value)));
  return named.length ? named : all.filter((e) => !e.name && e.value === undefined && e.text && matches(e.text));
}
