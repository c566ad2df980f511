// promtext.mjs - a strict reader of the Prometheus text exposition format 0.0.4 and of the
// naming conventions tabvisor follows, for the tests that scrape /metrics. parseMetrics
// throws on the first line that breaks the format; checkConventions returns the list of
// convention breaks (empty when clean). promtool() runs Prometheus's own checker when it
// is installed (deploy/install-deps.sh fetches it), else returns null.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(s, where) {
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) throw new Error(`${where}: bad value '${s}'`);
  return Number(s);
}

// '{a="x",b="y\"z"}' at text[i] -> [labels, index after '}'].
function parseLabels(text, i, where) {
  const labels = {};
  i++; // '{'
  for (;;) {
    if (text[i] === '}') return [labels, i + 1];
    const m = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i));
    if (!m) throw new Error(`${where}: bad label name at '${text.slice(i)}'`);
    const name = m[0];
    i += name.length;
    if (text[i] !== '=' || text[i + 1] !== '"') throw new Error(`${where}: expected =" after ${name}`);
    i += 2;
    let v = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new Error(`${where}: unterminated label value`);
      if (c === '"') break;
      if (c === '\\') {
        const e = text[i + 1];
        if (e === 'n') v += '\n'; else if (e === '\\' || e === '"') v += e;
        else throw new Error(`${where}: bad escape \\${e}`);
        i += 2;
        continue;
      }
      if (c === '\n') throw new Error(`${where}: newline in label value`);
      v += c;
      i++;
    }
    i++; // closing quote
    if (name in labels) throw new Error(`${where}: label ${name} twice`);
    labels[name] = v;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`${where}: expected , or } after label ${name}`);
  }
}

const SUFFIXES = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] };

// The family a sample name belongs to, given the TYPEs seen.
function familyOf(name, types) {
  if (types.has(name)) return name;
  for (const suf of ['_bucket', '_sum', '_count']) {
    if (name.endsWith(suf)) {
      const base = name.slice(0, -suf.length);
      const t = types.get(base);
      if (t && (SUFFIXES[t] || []).includes(suf)) return base;
    }
  }
  return name;
}

// -> Map family -> {type, help, samples: [{name, labels, value}]}
export function parseMetrics(text) {
  if (!text.endsWith('\n')) throw new Error('exposition does not end with a newline');
  const types = new Map();
  const fams = new Map();
  const seenSeries = new Set();
  const closed = new Set(); // families whose samples ended (no interleaving allowed)
  let current = null;
  const fam = (n) => {
    if (!fams.has(n)) fams.set(n, { type: 'untyped', help: null, samples: [] });
    return fams.get(n);
  };
  text.slice(0, -1).split('\n').forEach((line, k) => {
    const where = `line ${k + 1} '${line}'`;
    if (line === '') throw new Error(`${where}: empty line`);
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m;
      if (!NAME.test(name)) throw new Error(`${where}: bad metric name`);
      if (fams.get(name)?.samples.length) throw new Error(`${where}: ${kind} after samples of ${name}`);
      const f = fam(name);
      if (kind === 'TYPE') {
        if (types.has(name)) throw new Error(`${where}: second TYPE for ${name}`);
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${rest}`);
        types.set(name, rest);
        f.type = rest;
      } else {
        if (f.help !== null) throw new Error(`${where}: second HELP for ${name}`);
        if (/\\[^n\\]/.test(rest)) throw new Error(`${where}: bad escape in HELP`);
        f.help = rest;
      }
      return;
    }
    const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!m) throw new Error(`${where}: bad metric name`);
    const name = m[0];
    let i = name.length;
    let labels = {};
    if (line[i] === '{') [labels, i] = parseLabels(line, i, where);
    for (const l of Object.keys(labels)) if (!LABEL.test(l) || l.startsWith('__')) throw new Error(`${where}: bad label ${l}`);
    if (line[i] !== ' ') throw new Error(`${where}: expected a space before the value`);
    const parts = line.slice(i + 1).split(' ');
    if (parts.length > 2) throw new Error(`${where}: junk after the value`);
    const value = parseValue(parts[0], where);
    if (parts.length === 2 && !/^-?\d+$/.test(parts[1])) throw new Error(`${where}: bad timestamp`);
    const family = familyOf(name, types);
    if (family !== current) {
      if (closed.has(family)) throw new Error(`${where}: samples of ${family} are not contiguous`);
      if (current) closed.add(current);
      current = family;
    }
    const key = name + JSON.stringify(Object.entries(labels).sort());
    if (seenSeries.has(key)) throw new Error(`${where}: duplicate series`);
    seenSeries.add(key);
    fam(family).samples.push({ name, labels, value });
  });
  for (const [name, f] of fams) {
    if (f.type === 'counter') for (const s of f.samples) {
      if (!(s.value >= 0)) throw new Error(`counter ${s.name} is ${s.value}`);
    }
    if (f.type === 'histogram') checkHistogram(name, f);
  }
  return fams;
}

// Per label set (less le): le ascending, counts cumulative, +Inf bucket = _count, _sum given.
function checkHistogram(name, f) {
  const sets = new Map();
  const keyOf = (labels) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le').sort());
  for (const s of f.samples) {
    const key = keyOf(s.labels);
    if (!sets.has(key)) sets.set(key, { buckets: [], sum: undefined, count: undefined });
    const e = sets.get(key);
    if (s.name === `${name}_bucket`) {
      if (!('le' in s.labels)) throw new Error(`${name}_bucket without le`);
      e.buckets.push([parseValue(s.labels.le, `${name} le`), s.value]);
    } else if (s.name === `${name}_sum`) e.sum = s.value;
    else if (s.name === `${name}_count`) e.count = s.value;
    else throw new Error(`${s.name} in histogram ${name}`);
  }
  for (const [key, e] of sets) {
    const where = `histogram ${name}${key}`;
    if (e.sum === undefined || e.count === undefined) throw new Error(`${where}: no _sum or _count`);
    if (!e.buckets.length || e.buckets.at(-1)[0] !== Infinity) throw new Error(`${where}: last bucket is not +Inf`);
    for (let j = 1; j < e.buckets.length; j++) {
      if (!(e.buckets[j][0] > e.buckets[j - 1][0])) throw new Error(`${where}: le not ascending`);
      if (e.buckets[j][1] < e.buckets[j - 1][1]) throw new Error(`${where}: buckets not cumulative`);
    }
    if (e.buckets.at(-1)[1] !== e.count) throw new Error(`${where}: +Inf bucket ${e.buckets.at(-1)[1]} != _count ${e.count}`);
  }
}

// Prometheus naming conventions (https://prometheus.io/docs/practices/naming/, in words):
// one prefix, snake case, counters end in _total, a unit word is the base unit and comes
// last (before _total), every family has HELP and TYPE.
export function checkConventions(fams, prefix = 'tabvisor_') {
  const bad = [];
  for (const [name, f] of fams) {
    if (!name.startsWith(prefix)) bad.push(`${name}: not under ${prefix}`);
    if (!/^[a-z0-9_]+$/.test(name)) bad.push(`${name}: not snake case`);
    if (f.help === null || f.help === '') bad.push(`${name}: no HELP`);
    if (f.type === 'untyped') bad.push(`${name}: no TYPE`);
    if (f.type === 'counter' && !name.endsWith('_total')) bad.push(`${name}: counter without _total`);
    if (f.type !== 'counter' && name.endsWith('_total')) bad.push(`${name}: _total on a ${f.type}`);
    const base = name.replace(/_total$/, '');
    if (/(duration|latency|time)/.test(base) && !base.endsWith('_seconds')) bad.push(`${name}: a time not in _seconds`);
    if (/(byte|size)/.test(base) && !base.endsWith('_bytes')) bad.push(`${name}: a size not in _bytes`);
    if (/_(milliseconds|ms|kilobytes|megabytes|kb|mb)$/.test(base)) bad.push(`${name}: not a base unit`);
  }
  return bad;
}

// Prometheus's promtool, when found: $PROMTOOL, PATH, or where deploy/install-deps.sh puts it.
export function findPromtool() {
  const cands = [process.env.PROMTOOL,
    join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tabvisor', 'promtool', 'usr', 'bin', 'promtool')];
  for (const c of cands) if (c && existsSync(c)) return c;
  const r = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

// `promtool check metrics` on text: {ok, output}, or null when promtool is not installed.
export function promtool(text) {
  const bin = findPromtool();
  if (!bin) return null;
  const r = spawnSync(bin, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}`.trim(), bin };
}
