/**
 * Row 4: validation. Branch-first validation (the union package's validateUnionCall with the
 * notification definition) against ajv (JSON Schema 2020-12, allErrors, formats from
 * ajv-formats as the SDK client uses them) compiled from the oneOf profile's inputSchema.
 * Both must agree on every input, or the bench stops: a fast wrong validator is no baseline.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildCatalog } from '../dist/mcp/catalog.js';
import { loadConfig } from '../dist/config/config.js';
import { notificationDef } from '../dist/channels/send-union.js';
import { validateUnionCall } from '@notify-mcp/union';
import { ratio, summarize } from './lib/stats.mjs';

const addFormats = addFormatsModule.default ?? addFormatsModule;

const VALID = [
  { via: 'email', to: 'ops@example.com', subject: 'Deploy done', body_html: '<p>Deployed <b>v1.2</b></p>' },
  { via: 'email', to: ['a@example.com', 'b@example.org'], subject: 'Weekly', body_html: '<p>hi</p>', reply_to: 'noreply@example.com', idempotency_key: 'k-1' },
  { via: 'sms', to: '+14155550123', body: 'Server down' },
  { via: 'slack', channel: 'C0123ABCD', text: 'Deploy finished', thread: '1712345678.123456' },
];
const INVALID = [
  { via: 'sms', to: '+14155550123', body: 'Server down', subject: 'Outage' }, // field not on channel
  { via: 'email', to: 'ops@example.com', body_html: '<p>x</p>' }, // missing subject
  { via: 'slack', channel: 'ops', text: 'hi' }, // bad channel
  { via: 'fax', to: '+14155550123' }, // unknown via
];

function opsPerSec(fn, inputs, ms) {
  let n = 0;
  const t0 = performance.now();
  let now = t0;
  while (now - t0 < ms) {
    for (let i = 0; i < 1000; i++) fn(inputs[i % inputs.length]);
    n += 1000;
    now = performance.now();
  }
  return (n * 1000) / (now - t0);
}

export function benchValidation({ runs = 5, ms = 250 } = {}) {
  const config = loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' });
  const def = notificationDef(config.channels);
  const schema = buildCatalog(config).oneOf.tools.find((t) => t.name === 'send_notification').inputSchema;
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  const ajvValidate = ajv.compile(schema);
  const ours = (x) => validateUnionCall(def, {}, x).ok;
  const theirs = (x) => ajvValidate(x);

  for (const x of VALID) if (!ours(x) || !theirs(x)) throw new Error(`validators disagree on valid ${JSON.stringify(x)}`);
  for (const x of INVALID) if (ours(x) || theirs(x)) throw new Error(`validators disagree on invalid ${JSON.stringify(x)}`);

  const rows = [];
  for (const [label, inputs] of [['valid', VALID], ['invalid', INVALID]]) {
    opsPerSec(ours, inputs, 100);
    opsPerSec(theirs, inputs, 100);
    const a = [];
    const b = [];
    for (let r = 0; r < runs; r++) {
      if (r % 2 === 0) {
        a.push(opsPerSec(ours, inputs, ms));
        b.push(opsPerSec(theirs, inputs, ms));
      } else {
        b.push(opsPerSec(theirs, inputs, ms));
        a.push(opsPerSec(ours, inputs, ms));
      }
    }
    const sa = summarize(a);
    const sb = summarize(b);
    rows.push({
      section: '4. Validation',
      name: `branch-first validateUnionCall, ${label} inputs (${inputs.length} kinds, rotated)`,
      unit: 'ops/s',
      better: 'higher',
      value: sa,
      baselineName: 'ajv 2020 (allErrors, ajv-formats) compiled from the oneOf schema',
      baseline: sb,
      ratio: ratio(sa, sb, a, b),
      note: `${runs} runs × ${ms} ms, in process`,
    });
  }
  return rows;
}
