// The HTTP API's streams read the way a browser reads them: the `eventsource` package from the
// npm registry (the WHATWG EventSource, installed by api_sse_test.sh outside the source tree)
// against the real daemon. Prints one "ok - NAME" or "not ok - NAME: why" per check (the shell
// script numbers them as TAP) and "# ..." lines for the transcript.
import { EventSource } from 'eventsource';

const base = process.env.API_BASE;
const token = process.env.API_TOKEN;
const auth = { Authorization: `Bearer ${token}` };

function ok(name) { console.log(`ok - ${name}`); }
function bad(name, why) { console.log(`not ok - ${name}: ${String(why).replace(/\n/g, ' ')}`); }
function check(name, condition, why) { condition ? ok(name) : bad(name, why); }

// An EventSource with extra request headers (the bearer token; a page's Origin).
function source(path, headers = auth) {
  return new EventSource(`${base}${path}`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, ...headers } }),
  });
}

// Resolves with the first `count` events named `name` (parsed), or rejects after `ms`.
function collect(es, name, count, ms) {
  return new Promise((resolve, reject) => {
    const got = [];
    const timer = setTimeout(() => reject(new Error(`${got.length} of ${count} ${name} events in ${ms} ms`)), ms);
    es.addEventListener(name, (e) => {
      got.push(JSON.parse(e.data));
      if (got.length === count) { clearTimeout(timer); resolve(got); }
    });
  });
}

// The first error event: {code, message}; the EventSource is closed by then (no retry after
// an HTTP error status, as the standard says).
function failure(es, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ code: 'none' }), ms);
    es.addEventListener('error', (e) => { clearTimeout(timer); resolve({ code: e.code, state: es.readyState }); });
  });
}

async function step(name, body) {
  try { await body(); } catch (e) { bad(name, e?.stack ?? e); }
}

await step('events', async () => {
  const es = source('/api/events?follow=1&block=ticker');
  await new Promise((resolve, reject) => { es.onopen = resolve; es.onerror = (e) => reject(new Error(`error ${e.code}`)); });
  ok('an EventSource opens /api/events?follow=1 with the token');
  const events = collect(es, 'event', 2, 20000);
  const r = await fetch(`${base}/api/blocks/ticker/restart?wait=1`, { method: 'POST', headers: auth });
  check('the restart through the API answers 200', r.status === 200, r.status);
  const got = await events;
  console.log(`# events: ${JSON.stringify(got)}`);
  check('the restart arrives as typed `event` events with JSON data',
    got.every((e) => e.block === 'ticker' && typeof e.seq === 'number' && e.action),
    JSON.stringify(got));
  check('the first is the old process\'s kill or die', ['kill', 'die', 'stop', 'restart'].includes(got[0].action), got[0].action);
  es.close();
});

await step('logs', async () => {
  const es = source('/api/blocks/ticker/logs?follow=1&tail=1');
  const lines = await collect(es, 'line', 3, 20000);
  console.log(`# lines: ${JSON.stringify(lines)}`);
  // The tail line may be the daemon's own note of the restart above ("[stackie] running", on the
  // `stackie` stream) when the new ticker has not printed yet; every line after it is followed.
  const tick = (l) => /^tick \d+$/.test(l.text) && l.stream === 'stdout';
  const note = (l) => l.stream === 'stackie' && l.text.startsWith('[stackie] ');
  check('log lines follow as `line` events', (tick(lines[0]) || note(lines[0])) && lines.slice(1).every(tick),
    JSON.stringify(lines));
  es.close();
});

await step('stats', async () => {
  const es = source('/api/stats?stream=1&interval_ms=300');
  const [sample] = await collect(es, 'stats', 1, 20000);
  const busy = (sample.blocks ?? []).find((b) => b.name === 'busy');
  console.log(`# stats: ${JSON.stringify(busy)}`);
  check('stats stream as `stats` events, the busy block using CPU', busy?.state === 'running' &&
    busy.cpu_percent > 10 && busy.memory_bytes > 0, JSON.stringify(busy));
  es.close();
});

await step('refusals', async () => {
  const page = source('/api/events?follow=1', { ...auth, Origin: 'http://evil.example' });
  const refused = await failure(page, 10000);
  check('a page\'s request (with Origin) is refused with 403 and not retried', refused.code === 403 && refused.state === 2,
    JSON.stringify(refused));
  page.close();
  const anonymous = source('/api/events?follow=1', {});
  const denied = await failure(anonymous, 10000);
  check('no token: 401, not retried', denied.code === 401 && denied.state === 2, JSON.stringify(denied));
  anonymous.close();
});
