// cdp_guard.js - the extension's gate for the relay's cdp verb: the extension
// layer of the one CDP policy table (proto/cdp_policy.c), whose rows
// cdp_policy.js carries, generated at build time. The relay checks the same
// rows before a command reaches us; this repeats it, since the extension is
// the last thing between a command and the user's profile.
// The URL rules mirror proto/url_policy.c: the URL as the browser parses it.
import { CDP_RULES, URL_ALLOW } from './cdp_policy.js';

// The most specific row for method: exact, then "Domain.*", then "*.name".
function ruleFor(method) {
  const dot = method.indexOf('.');
  let best = null;
  let score = 0;
  for (const r of CDP_RULES) {
    let s = 0;
    if (r.method === method) s = 3;
    else if (r.method.endsWith('.*') && r.method.slice(0, -1) === method.slice(0, dot + 1)) s = 2;
    else if (r.method.startsWith('*.') && r.method.slice(1) === method.slice(dot)) s = 1;
    if (s > score) {
      best = r;
      score = s;
    }
  }
  return best;
}

function isMethodName(method) {
  if (typeof method !== 'string') return false;
  const parts = method.split('.');
  return parts.length === 2 && parts[0] !== '' && parts[1] !== '';
}

function member(params, path) {
  let v = params;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = Object.prototype.hasOwnProperty.call(v, key) ? v[key] : undefined;
  }
  return v;
}

function isEmpty(v) {
  if (v === undefined || v === null || v === false || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

// Why url may not be loaded, or null.
export function urlRefusal(url) {
  if (typeof url !== 'string') return 'no URL';
  if (url.includes('\0')) return 'a URL may not hold a NUL character';
  // Strip C0 controls and spaces at both ends, drop tabs and newlines.
  const norm = url.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '').replace(/[\t\n\r]/g, '');
  if (norm === '') return 'an empty URL';
  const m = /^([A-Za-z][A-Za-z0-9+.-]{0,31}):/.exec(norm);
  if (!m) return 'not an absolute URL with a scheme';
  const scheme = m[1].toLowerCase();
  const rest = norm.slice(m[0].length);
  if (URL_ALLOW.http && (scheme === 'http' || scheme === 'https')) return null;
  if (URL_ALLOW.data && scheme === 'data') return null;
  if (URL_ALLOW.aboutBlank && scheme === 'about' && /^blank(?:$|[?#])/i.test(rest)) return null;
  if (scheme === 'file') return 'local files may not be loaded';
  return URL_ALLOW.data
    ? 'only http(s), about:blank and data: URLs may be loaded here'
    : 'only http(s) and about:blank URLs may be loaded here';
}

// Why the extension must not send method with params, or null.
export function cdpRefusal(method, params) {
  if (!isMethodName(method)) return 'not a CDP method name (Domain.method)';
  const r = ruleFor(method);
  if (!r) return null;
  if (!r.pass) return r.why;
  if (params !== undefined && params !== null && (typeof params !== 'object' || Array.isArray(params)))
    return 'its params are not an object';
  if (r.barParam && !isEmpty(member(params || {}, r.barParam))) return r.why;
  if (r.urlParam) {
    const u = member(params || {}, r.urlParam);
    if (u !== undefined && typeof u !== 'string') return 'its URL is not a string';
    if (u !== undefined) return urlRefusal(u);
  }
  return null;
}
