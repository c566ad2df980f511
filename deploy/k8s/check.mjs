// check.mjs [TABVISOR] - validate deploy/k8s/ without a cluster (deploy/k8s-check.sh; CI).
//
// - every YAML document parses strictly (duplicate keys are errors) and validates against
//   the Kubernetes 1.27 API schema of its kind (npm kubernetes-models: types, required
//   fields, formats such as quantities; it does not reject unknown fields, so the checks
//   below name every field tabvisor relies on);
// - names, labels and selectors agree: the StatefulSet's selector and both Services'
//   selectors match the pod template, serviceName is the headless Service, the Services'
//   target port is the container's, kustomization.yaml lists every manifest but secret.yaml;
// - the probes are GET /healthz on the container port with a Host the config allows;
// - the token comes from secret.yaml's Secret and key; the config file is the ConfigMap's key
//   at the path TABVISOR_CONFIG names; TABVISOR_INSTANCE_ID is the pod's name;
// - security: non-root with the image's uid (deploy/container/Dockerfile's USER), no
//   privilege escalation, read-only root with a writable volume at every path tabvisor and
//   Chromium write, all capabilities dropped but SYS_CHROOT, a seccomp profile other than
//   Unconfined;
// - memory: requests and limits at least the formula of statefulset.yaml's comment, from the
//   figures in docs/memory.md and maxSessions in the ConfigMap;
// - tabvisor itself (TABVISOR, default build/tabvisor) accepts the ConfigMap's config file:
//   it starts with it (listening on 127.0.0.1:0 instead of the file's 0.0.0.0) and stops.
// Each check also runs once on something broken and must fail there.
import { readFileSync, readdirSync, mkdtempSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import { Namespace, ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { StatefulSet } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const bin = process.argv[2] || join(repo, 'build', 'tabvisor');
const models = { 'v1/Namespace': Namespace, 'v1/ConfigMap': ConfigMap, 'v1/Secret': Secret,
  'v1/Service': Service, 'apps/v1/StatefulSet': StatefulSet,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy };
let failures = 0;
const fail = (msg) => { console.error(`k8s-check: FAIL: ${msg}`); failures++; };
const check = (ok, msg) => { if (!ok) fail(msg); return ok; };

// --- parse and validate every document ---
function load(file) {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'), { uniqueKeys: true });
  return docs.map((d) => {
    if (d.errors.length) throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
    return d.toJS();
  }).filter(Boolean);
}
function validate(obj, where) {
  const M = models[`${obj.apiVersion}/${obj.kind}`];
  if (!check(M, `${where}: unexpected kind ${obj.apiVersion}/${obj.kind}`)) return false;
  try { new M(obj).validate(); return true; } catch (e) { fail(`${where}: ${e.message}`); return false; }
}
const files = readdirSync(here).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
const objs = [];
for (const f of files) for (const o of load(join(here, f))) {
  validate(o, `${f} ${o.kind}/${o.metadata?.name}`);
  objs.push({ file: f, ...o });
}
const one = (kind, name) => {
  const found = objs.filter((o) => o.kind === kind && (!name || o.metadata.name === name));
  check(found.length === 1, `want one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0] || {};
};
const kust = load(join(here, 'kustomization.yaml'))[0];
const want = files.filter((f) => f !== 'secret.yaml');
check(JSON.stringify([...kust.resources].sort()) === JSON.stringify(want),
  `kustomization.yaml resources ${kust.resources} != ${want}`);
check(!kust.resources.includes('secret.yaml'), 'kustomization.yaml must not apply secret.yaml (empty token)');

// --- the objects ---
const sts = one('StatefulSet', 'tabvisor');
const cm = one('ConfigMap');
const secret = one('Secret');
const svc = one('Service', 'tabvisor');
const headless = one('Service', 'tabvisor-headless');
const ns = kust.namespace;
for (const o of objs) {
  check(o.kind === 'Namespace' ? o.metadata.name === ns : o.metadata.namespace === ns,
    `${o.file} ${o.kind}: not in namespace ${ns}`);
  check(o.metadata.labels?.['app.kubernetes.io/name'] === 'tabvisor', `${o.file} ${o.kind}: no app label`);
}
const podLabels = sts.spec?.template?.metadata?.labels || {};
const matches = (sel) => sel && Object.keys(sel).length > 0 &&
  Object.entries(sel).every(([k, v]) => podLabels[k] === v);
check(matches(sts.spec?.selector?.matchLabels), 'StatefulSet selector does not match its pod labels');
check(matches(svc.spec?.selector), 'Service tabvisor does not select the pods');
check(matches(headless.spec?.selector), 'Service tabvisor-headless does not select the pods');
check(headless.spec?.clusterIP === 'None', 'tabvisor-headless is not headless');
check(sts.spec?.serviceName === 'tabvisor-headless', 'StatefulSet serviceName is not the headless Service');

const pod = sts.spec?.template?.spec || {};
const c = (pod.containers || []).find((x) => x.name === 'tabvisor') || {};
const port = (c.ports || []).find((p) => p.name === 'http') || {};
const portOk = (p) => p === port.name || p === port.containerPort;
for (const s of [svc, headless]) {
  for (const p of s.spec?.ports || []) check(portOk(p.targetPort), `${s.metadata.name}: targetPort ${p.targetPort} is not the container's`);
}

// The config file: the ConfigMap's key, mounted where TABVISOR_CONFIG says.
const env = Object.fromEntries((c.env || []).map((e) => [e.name, e]));
const cfgPath = env.TABVISOR_CONFIG?.value || '';
const cfgMount = (c.volumeMounts || []).find((m) => cfgPath.startsWith(`${m.mountPath}/`));
const cfgVol = (pod.volumes || []).find((v) => v.name === cfgMount?.name);
check(cfgVol?.configMap?.name === cm.metadata?.name, `TABVISOR_CONFIG ${cfgPath} is not in the ConfigMap's volume`);
const cfgKey = cfgPath.slice((cfgMount?.mountPath.length ?? 0) + 1);
const cfgText = cm.data?.[cfgKey];
let cfg = {};
if (check(typeof cfgText === 'string', `ConfigMap has no key ${cfgKey}`)) cfg = JSON.parse(cfgText);
const tok = env.TABVISOR_AUTH_TOKEN?.valueFrom?.secretKeyRef;
check(tok?.name === secret.metadata?.name && tok?.key in (secret.stringData || secret.data || {}),
  'TABVISOR_AUTH_TOKEN is not secret.yaml\'s Secret and key');
check(env.TABVISOR_INSTANCE_ID?.valueFrom?.fieldRef?.fieldPath === 'metadata.name',
  'TABVISOR_INSTANCE_ID is not the pod name');
check(pod.enableServiceLinks === false, 'enableServiceLinks must be false (TABVISOR_* service variables)');
check(pod.automountServiceAccountToken === false, 'automountServiceAccountToken must be false');

// The listener and the probes.
const [, cfgPort] = /^0\.0\.0\.0:(\d+)$/.exec(cfg.http || '') || [];
check(Number(cfgPort) === port.containerPort, `config http ${cfg.http} is not 0.0.0.0:${port.containerPort}`);
for (const which of ['readinessProbe', 'livenessProbe']) {
  const g = c[which]?.httpGet;
  if (!check(g, `${which}: no httpGet`)) continue;
  check(g.path === '/healthz' && portOk(g.port), `${which}: not GET /healthz on the container port`);
  const host = (g.httpHeaders || []).find((h) => h.name.toLowerCase() === 'host')?.value;
  check(host && (cfg.allowedHost || []).includes(host), `${which}: Host ${host} is not in allowedHost`);
}

// Egress: the pods may not reach link-local (cloud metadata) or private ranges.
export function egressRefuses(policy, labels, cidrs) {
  const sel = policy.spec?.podSelector?.matchLabels || {};
  if (!Object.keys(sel).length || !Object.entries(sel).every(([k, v]) => labels[k] === v)) return 'does not select the pods';
  if (!(policy.spec?.policyTypes || []).includes('Egress')) return 'has no Egress policy type';
  for (const rule of policy.spec?.egress || []) {
    const ports = (rule.ports || []).map((p) => p.port);
    if (!rule.to && ports.length && ports.every((p) => p === 53)) continue; // DNS only
    if (!rule.to) return 'an egress rule allows every destination';
    for (const peer of rule.to) {
      const b = peer.ipBlock;
      if (!b) return 'an egress peer is not an ipBlock';
      const v6 = b.cidr.includes(':');
      for (const c of cidrs.filter((x) => x.includes(':') === v6)) {
        if (!(b.except || []).includes(c)) return `${b.cidr} does not except ${c}`;
      }
    }
  }
  return null;
}
const privateRanges = ['169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fe80::/10', 'fc00::/7'];
const netpol = one('NetworkPolicy', 'tabvisor-egress');
const why = egressRefuses(netpol, podLabels, privateRanges);
check(!why, `NetworkPolicy tabvisor-egress: ${why}`);
const openPolicy = structuredClone(netpol);
openPolicy.spec.egress[1].to[0].ipBlock.except = openPolicy.spec.egress[1].to[0].ipBlock.except.filter((c) => c !== '169.254.0.0/16');
check(egressRefuses(openPolicy, podLabels, privateRanges), 'the egress check passes a policy that lets pages reach 169.254.0.0/16');

// Security.
const dockerfile = readFileSync(join(repo, 'deploy/container/Dockerfile'), 'utf8');
const [, uid, gid] = /^USER (\d+):(\d+)$/m.exec(dockerfile) || [];
const [, expose] = /^EXPOSE (\d+)$/m.exec(dockerfile) || [];
const psc = pod.securityContext || {};
const csc = c.securityContext || {};
check(psc.runAsNonRoot === true && psc.runAsUser === Number(uid) && psc.runAsGroup === Number(gid),
  `pod must run as non-root ${uid}:${gid}, the image's USER`);
check(Number(expose) === port.containerPort, `Dockerfile EXPOSE ${expose} != containerPort ${port.containerPort}`);
check(csc.allowPrivilegeEscalation === false, 'allowPrivilegeEscalation must be false');
check(csc.readOnlyRootFilesystem === true, 'readOnlyRootFilesystem must be true');
check(JSON.stringify(csc.capabilities?.drop) === '["ALL"]', 'capabilities must drop ALL');
check(JSON.stringify(csc.capabilities?.add || []) === '["SYS_CHROOT"]',
  'capabilities must add back SYS_CHROOT only (the seccomp profile allows chroot with it)');
const seccomp = csc.seccompProfile || psc.seccompProfile;
check(seccomp && seccomp.type !== 'Unconfined', 'a seccomp profile other than Unconfined');
const writable = (c.volumeMounts || []).filter((m) => !m.readOnly).map((m) => m.mountPath);
for (const p of [cfg.runtimeDir, cfg.outputDir, '/tmp', '/dev/shm']) {
  check(writable.includes(p), `read-only root: no writable volume at ${p}`);
}
const imageCfg = JSON.parse(readFileSync(join(repo, 'deploy/container/config.json'), 'utf8'));
check(imageCfg.runtimeDir === cfg.runtimeDir && imageCfg.outputDir === cfg.outputDir,
  'the ConfigMap and the image disagree on runtimeDir/outputDir (the image made those dirs)');

// --- memory: the formula of statefulset.yaml, from docs/memory.md ---
export function mib(q) {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(q));
  if (!m) throw new Error(`not a memory quantity: ${q}`);
  const f = { Ki: 1 / 1024, Mi: 1, Gi: 1024, Ti: 1024 * 1024, k: 1e3 / 2 ** 20, M: 1e6 / 2 ** 20,
    G: 1e9 / 2 ** 20, T: 1e12 / 2 ** 20, undefined: 1 / 2 ** 20 }[m[2]];
  return Number(m[1]) * f;
}
const memDoc = readFileSync(join(repo, 'docs/memory.md'), 'utf8');
const cell = (label) => {
  const row = memDoc.split('\n').find((l) => l.startsWith(`| ${label}`));
  return Number(row?.split('|')[3]?.replace(/\*/g, '').trim()); // "after (headless shell)"
};
const perSession = cell('**total per extra session**');
const tree17 = cell('whole tree, 17 sessions');
check(perSession > 0 && tree17 > 0, `docs/memory.md figures not found (${perSession}, ${tree17})`);
const base = tree17 - 17 * perSession;
const realPage = 100; // MiB per session on real sites (50-200: statefulset.yaml, docs/deploy.md)
const n = cfg.maxSessions;
const res = c.resources || {};
const needReq = base + n * perSession;
const needLim = base + n * realPage;
check(Number.isInteger(n) && n >= 1, 'the ConfigMap must set maxSessions');
check(mib(res.requests?.memory) >= needReq,
  `requests.memory ${res.requests?.memory} < ${needReq.toFixed(0)} MiB (${base.toFixed(0)} + ${n} x ${perSession})`);
check(mib(res.limits?.memory) >= needLim,
  `limits.memory ${res.limits?.memory} < ${needLim.toFixed(0)} MiB (${base.toFixed(0)} + ${n} x ${realPage})`);
console.log(`k8s-check: memory: base ${base.toFixed(0)} MiB, ${perSession} MiB/session measured, ` +
  `${realPage} budgeted; maxSessions ${n}: request ${res.requests?.memory} >= ${needReq.toFixed(0)} MiB, ` +
  `limit ${res.limits?.memory} >= ${needLim.toFixed(0)} MiB`);

// --- tabvisor accepts the config file ---
function runTabvisor(config) {
  const dir = mkdtempSync(join(tmpdir(), 'tv-k8s-check-'));
  writeFileSync(join(dir, 'config.json'), config, { mode: 0o600 });
  const child = spawn(bin, ['--config', join(dir, 'config.json'), '--http', '127.0.0.1:0',
    '--runtime-dir', join(dir, 'run'), '--output-dir', join(dir, 'out'), '--pool', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, TABVISOR_AUTH_TOKEN: randomBytes(16).toString('hex') },
  });
  let log = '';
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
    child.stderr.on('data', (d) => {
      log += d;
      if (/Listening on http:\/\/127\.0\.0\.1:\d+\/mcp/.test(log)) child.kill('SIGTERM');
    });
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      resolve({ started: /Listening on/.test(log), code, sig, log });
    });
  });
}
if (check(existsSync(bin), `no tabvisor binary at ${bin}`)) {
  const r = await runTabvisor(cfgText);
  check(r.started && r.code === 0, `tabvisor refused the ConfigMap's config (exit ${r.code} ${r.sig}):\n${r.log}`);
  if (r.started) console.log(`k8s-check: tabvisor started with the ConfigMap's ${cfgKey} and stopped (exit ${r.code})`);
  // The same check must fail on a misspelt key.
  const bad = await runTabvisor(cfgText.replace('"maxSessions"', '"maxSesions"'));
  check(!bad.started && bad.code === 2 && /maxSesions/.test(bad.log), `a misspelt key was not refused: ${bad.log}`);
}

// --- the schema validation must fail on a broken manifest ---
const broken = structuredClone(sts);
delete broken.file;
broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
let threw = false;
try { new StatefulSet(broken).validate(); } catch { threw = true; }
check(threw, 'schema validation accepted a string containerPort');

if (failures) { console.error(`k8s-check: ${failures} failure(s)`); process.exit(1); }
console.log(`k8s-check: ok (${objs.length} objects in ${files.join(', ')})`);
