// The MCP e2e's client: the official TypeScript SDK (@modelcontextprotocol/sdk, installed by
// mcp_test.sh outside the source tree) spawns `stackie mcp serve --stdio` and calls every tool
// against the running stack. Prints one "ok - NAME" or "not ok - NAME: why" per check (the
// shell script numbers them as TAP) and writes every message both ways to $MCP_TRANSCRIPT.
import { appendFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const stackie = process.env.STACKIE;
const stack = process.env.MCP_STACK;
const transcript = process.env.MCP_TRANSCRIPT;

function log(direction, message) {
  appendFileSync(transcript, `${direction} ${JSON.stringify(message)}\n`);
}
function ok(name) { console.log(`ok - ${name}`); }
function bad(name, why) { console.log(`not ok - ${name}: ${String(why).replace(/\n/g, ' ')}`); }
function check(name, condition, why) { condition ? ok(name) : bad(name, why); }

// The SDK's stdio transport, with every message logged on its way.
class LoggedTransport {
  constructor(inner) { this.inner = inner; }
  async start() {
    this.inner.onmessage = (m) => { log('<-', m); this.onmessage?.(m); };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    return this.inner.start();
  }
  async send(message, options) { log('->', message); return this.inner.send(message, options); }
  async close() { return this.inner.close(); }
  setProtocolVersion(version) { this.inner.setProtocolVersion?.(version); }
}

const text = (result) => (result.content ?? []).map((c) => c.text ?? '').join('');
const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });

const client = new Client({ name: 'stackie-e2e', version: '1.0.0' });
const inner = new StdioClientTransport({
  command: stackie, args: ['mcp', 'serve', '--stdio'], env: { ...process.env }, stderr: 'inherit',
});
try {
  await client.connect(new LoggedTransport(inner));
  ok('the SDK client initializes a session');
} catch (e) {
  bad('the SDK client initializes a session', e);
  process.exit(0);
}

async function step(name, body) {
  try { await body(); } catch (e) { bad(name, e?.stack ?? e); }
}

await step('serverInfo and capabilities', async () => {
  const info = client.getServerVersion();
  check('serverInfo names stackie', info?.name === 'stackie', JSON.stringify(info));
  const caps = client.getServerCapabilities();
  check('tools and resources are capabilities', !!caps?.tools && !!caps?.resources, JSON.stringify(caps));
});

await step('ping', async () => { await client.ping(); ok('ping is answered'); });

let toolNames = [];
await step('tools/list', async () => {
  const { tools } = await client.listTools();
  toolNames = tools.map((t) => t.name);
  const wanted = ['list_sandboxes', 'inspect_sandbox', 'start_sandbox', 'stop_sandbox',
    'restart_sandbox', 'kill_sandbox', 'get_sandbox_logs', 'exec_in_sandbox', 'search_sandbox_logs',
    'get_sandbox_stats', 'get_health_status', 'summarise_sandbox_health'];
  const missing = wanted.filter((n) => !toolNames.includes(n));
  check('tools/list has every tool', missing.length === 0, `missing ${missing}`);
  check('every tool has an object input schema', tools.every((t) => t.inputSchema?.type === 'object'),
    JSON.stringify(tools.map((t) => t.inputSchema?.type)));
  console.log(`# tools: ${toolNames.join(' ')}`);
});

let webPid = 0;
await step('list_sandboxes', async () => {
  const r = await call('list_sandboxes', {});
  const rows = r.structuredContent?.sandboxes ?? [];
  const web = rows.find((b) => b.name === 'web' && b.stack === stack);
  check('list_sandboxes shows the running web block', web?.state === 'running' && !r.isError, text(r));
  check('list_sandboxes shows the logger block', rows.some((b) => b.name === 'logger'), text(r));
  webPid = web?.pid ?? 0;
});

await step('inspect_sandbox', async () => {
  const r = await call('inspect_sandbox', { sandbox: `${stack}/web` });
  check('inspect_sandbox gives the policy and log paths',
    !r.isError && r.structuredContent?.name === 'web' && !!r.structuredContent?.policy &&
    !!r.structuredContent?.logs?.stdout, text(r).slice(0, 300));
});

await step('get_health_status', async () => {
  const r = await call('get_health_status', { sandbox: 'web' });
  check('get_health_status says healthy with a check',
    r.structuredContent?.health === 'healthy' && r.structuredContent?.has_health_check === true, text(r));
});

await step('summarise_sandbox_health', async () => {
  const r = await call('summarise_sandbox_health', { sandbox: 'web' });
  const t = text(r);
  console.log(`# summary: ${t}`);
  check('the summary is a few hundred bytes', t.length > 0 && t.length <= 600, `${t.length} bytes`);
  check('the summary says running, healthy and the port reachable',
    /running/.test(t) && /healthy/.test(t) && / reachable/.test(t) && !/NOT reachable/.test(t), t);
  const l = await call('summarise_sandbox_health', { sandbox: 'logger' });
  check("the logger's summary quotes its last error line", /ERROR boom/.test(text(l)), text(l));
});

await step('get_sandbox_logs', async () => {
  const r = await call('get_sandbox_logs', { sandbox: 'logger', tail: 20 });
  check('get_sandbox_logs has the logger\'s lines', /INFO tick \d+/.test(text(r)) && !r.isError, text(r).slice(0, 300));
  check('tail bounds the lines', (r.structuredContent?.count ?? 99) <= 20, r.structuredContent?.count);
  const e = await call('get_sandbox_logs', { sandbox: 'logger', stream: 'stderr', tail: 50 });
  const lines = e.structuredContent?.lines ?? [];
  check('stream: stderr gives only stderr lines', lines.length > 0 && lines.every((l) => l.stream !== 'stdout'),
    JSON.stringify(lines.slice(0, 3)));
  const h = await call('get_sandbox_logs', { sandbox: 'hostile', tail: 50 });
  check('a hostile block\'s broken bytes and fake JSON-RPC arrive as text', !h.isError &&
    /\uFFFD/.test(text(h)) && /"jsonrpc":"2.0"/.test(text(h)), text(h).slice(0, 300));
});

await step('search_sandbox_logs', async () => {
  const s = await call('search_sandbox_logs', { sandbox: 'logger', pattern: 'boom', context: 1 });
  const m = s.structuredContent?.matches ?? [];
  check('substring search finds the error lines', m.length > 0 && m.every((x) => /boom/.test(x.text)), text(s).slice(0, 300));
  check('matches carry context lines', m.some((x) => x.before.length === 1 && /tick/.test(x.before[0].text)),
    JSON.stringify(m[0]));
  const r = await call('search_sandbox_logs', { sandbox: 'logger', pattern: '^INFO tick [0-9]+$', regex: true });
  check('regex search', (r.structuredContent?.total_matches ?? 0) > 0 &&
    (r.structuredContent?.matches ?? []).every((x) => /^INFO tick \d+$/.test(x.text)), text(r).slice(0, 300));
  const lv = await call('search_sandbox_logs', { sandbox: 'logger', pattern: ' ', level: 'error', since: '10m' });
  check('level: error keeps only error lines', (lv.structuredContent?.total_matches ?? 0) > 0 &&
    lv.structuredContent.matches.every((x) => x.level === 'error'), text(lv).slice(0, 300));
  const bad_ = await call('search_sandbox_logs', { sandbox: 'logger', pattern: '(', regex: true });
  check('an invalid regex is a tool error', bad_.isError === true, text(bad_));
});

await step('exec_in_sandbox', async () => {
  const r = await call('exec_in_sandbox', { sandbox: 'web', argv: ['sh', '-c', 'echo out; echo err >&2; exit 3'] });
  const sc = r.structuredContent ?? {};
  check('exec gives the exit status and both streams',
    sc.exit_code === 3 && sc.stdout?.text === 'out\n' && sc.stderr?.text === 'err\n' && !r.isError, text(r));
  const w = await call('exec_in_sandbox', { sandbox: 'web', argv: ['sh', '-c', 'echo "$GREETING"'] });
  check('exec runs with the block\'s environment',
    w.structuredContent?.stdout?.text === 'hello from web\n', text(w));
  const big = await call('exec_in_sandbox', { sandbox: 'web', argv: ['sh', '-c', 'head -c 100000 /dev/zero | tr "\\0" x'] });
  const o = big.structuredContent?.stdout ?? {};
  check('output over 64 KiB is cut and the cut reported',
    o.truncated === true && o.bytes === 100000 && o.text.length === 65536 && /truncated/.test(text(big)),
    JSON.stringify({ t: o.truncated, b: o.bytes, n: o.text?.length }));
  const slow = await call('exec_in_sandbox', { sandbox: 'web', argv: ['sleep', '30'], timeout_s: 1 });
  check('a command past its timeout is killed and reported',
    slow.isError === true && slow.structuredContent?.timed_out === true, text(slow));
  const left = await call('exec_in_sandbox', { sandbox: 'web', argv: ['sh', '-c', 'sleep 100 & echo hi'] });
  check('a command that leaves a child holding its output still answers',
    left.structuredContent?.stdout?.text === 'hi\n' && left.structuredContent?.exit_code === 0, text(left));
  const over = await call('exec_in_sandbox', { sandbox: 'web', argv: ['true'], timeout_s: 301 });
  check('timeout_s over 300 is a tool error', over.isError === true && /at most 300/.test(text(over)), text(over));
  const nope = await call('exec_in_sandbox', { sandbox: 'nosuchblock', argv: ['true'] });
  check('exec in an unknown block is a tool error', nope.isError === true, text(nope));
});

await step('restart_sandbox', async () => {
  const r = await call('restart_sandbox', { sandbox: 'web' });
  const row = r.structuredContent?.sandbox ?? {};
  check('restart_sandbox brings web back with a new pid',
    !r.isError && row.state === 'running' && row.pid > 0 && row.pid !== webPid, `${webPid} -> ${text(r)}`);
});

await step('stop and start', async () => {
  const s = await call('stop_sandbox', { sandbox: 'logger' });
  check('stop_sandbox stops the logger', !s.isError && s.structuredContent?.sandbox?.state === 'stopped', text(s));
  const t = await call('start_sandbox', { sandbox: 'logger' });
  check('start_sandbox starts it again', !t.isError && t.structuredContent?.sandbox?.state === 'running', text(t));
});

await step('get_sandbox_stats', async () => {
  const r = await call('get_sandbox_stats', { sandbox: 'logger', interval_ms: 300 });
  const row = (r.structuredContent?.sandboxes ?? [])[0] ?? {};
  console.log(`# stats: ${JSON.stringify(row)}`);
  check('get_sandbox_stats measures the logger', !r.isError && row.name === 'logger' &&
    row.state === 'running' && row.memory_bytes > 0 && row.pids >= 1 &&
    typeof row.cpu_percent === 'number', text(r).slice(0, 300));
  const all = await call('get_sandbox_stats', {});
  const names = (all.structuredContent?.sandboxes ?? []).map((b) => b.name).sort();
  check('without a sandbox, every block', JSON.stringify(names) === '["hostile","logger","web"]',
    JSON.stringify(names));
});

await step('kill_sandbox', async () => {
  const before = await call('list_sandboxes', {});
  const pid = (before.structuredContent?.sandboxes ?? []).find((b) => b.name === 'hostile')?.pid;
  const k = await call('kill_sandbox', { sandbox: 'hostile', signal: 'SIGKILL' });
  check('kill_sandbox answers with the block', !k.isError && k.structuredContent?.sandbox?.name === 'hostile', text(k));
  // on-failure (the default policy) brings it back after a death by signal: a new pid.
  let now;
  for (let i = 0; i < 100; i++) {
    const l = await call('list_sandboxes', {});
    now = (l.structuredContent?.sandboxes ?? []).find((b) => b.name === 'hostile');
    if (now?.state === 'running' && now.pid !== pid && now.restarts >= 1) break;
    await new Promise((done) => setTimeout(done, 100));
  }
  check('the killed block died and its restart policy started it again',
    now?.state === 'running' && now.pid !== pid && now.restarts >= 1, `${pid} -> ${JSON.stringify(now)}`);
  const bad_ = await call('kill_sandbox', { sandbox: 'hostile', signal: 'SIGNOPE' });
  check('an unknown signal is a tool error', bad_.isError === true && /signal/.test(text(bad_)), text(bad_));
});

await step('bad arguments', async () => {
  const r = await call('inspect_sandbox', { sandbox: 7 });
  check('a wrong argument type is a tool error', r.isError === true && /must be a string/.test(text(r)), text(r));
  const u = await call('inspect_sandbox', { sandbox: 'web', force: true });
  check('an unknown argument is a tool error', u.isError === true && /not an argument/.test(text(u)), text(u));
  try {
    await call('format_disk', {});
    bad('an unknown tool is a protocol error', 'it was answered');
  } catch (e) {
    check('an unknown tool is a protocol error', e.code === -32602, `${e.code} ${e}`);
  }
});

await step('resources', async () => {
  const { resources } = await client.listResources();
  const uri = `stackie://${stack}/logger/logs`;
  check('resources/list has each block\'s logs', resources.some((r) => r.uri === uri),
    JSON.stringify(resources.map((r) => r.uri)));
  const read = await client.readResource({ uri });
  check('resources/read gives the log text', /INFO tick/.test(read.contents?.[0]?.text ?? ''),
    JSON.stringify(read).slice(0, 300));
  try {
    await client.readResource({ uri: 'file:///etc/passwd' });
    bad('a resource outside stackie:// is refused', 'it was read');
  } catch (e) {
    check('a resource outside stackie:// is refused', e.code === -32002, `${e.code} ${e}`);
  }
});

await client.close();
