/**
 * The MCP Inspector's CLI (`inspector --cli`, from @modelcontextprotocol/inspector), as a user
 * runs it from a shell: one process per method, tools/list, then tools/call with each argument
 * as `--tool-arg key=value` (JSON values for objects and arrays, as the CLI parses them). No
 * model: what its user sees is the server's schema as listed, and the call's result as printed.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { BAD_CALL, VALID_CALLS, rulesKept, shaped, stdioServer } from './lib.mjs';

const run = promisify(execFile);
const LAUNCHER = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/clients/launcher/build/index.js');

async function inspector(cell, method, extra = []) {
  const target = cell.url
    ? [cell.url]
    : (() => {
        const s = stdioServer(cell.profile);
        return [...Object.entries(s.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]), '--', s.command, ...s.args];
      })();
  // The target comes last: after `--` for stdio, so that the server's own flags stay its own.
  const args = [LAUNCHER, '--cli', '--method', method, ...extra, ...(cell.url ? ['--transport', 'http'] : []), ...target];
  try {
    const { stdout } = await run(process.execPath, args, {
      timeout: 60_000,
      maxBuffer: 16 << 20,
      env: { ...process.env, HOME: process.env.HOME ?? '/tmp' },
    });
    return stdout;
  } catch (err) {
    return `${err.stdout ?? ''}${err.stderr ?? ''}${err.message}`;
  }
}

const toolArgs = (args) =>
  Object.entries(args).flatMap(([k, v]) => ['--tool-arg', `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`]);

export async function runInspector(cell) {
  const listedText = await inspector(cell, 'tools/list');
  let tools = [];
  try {
    tools = JSON.parse(listedText).tools ?? [];
  } catch {
    return {
      accepted: false,
      rulesKept: false,
      valid: '0/3',
      errorIntact: false,
      note: `tools/list printed: ${listedText.split('\n')[0].slice(0, 120)}`,
    };
  }
  const names = tools.map((t) => t.name);
  const accepted = names.includes(cell.profile === 'per-channel' ? 'send_sms' : 'send_notification');
  // One process per call, as from a shell; run side by side, since each starts a server of its own.
  const call = (c) => {
    const { name, args } = shaped(cell.profile, c);
    return names.includes(name) ? inspector(cell, 'tools/call', ['--tool-name', name, ...toolArgs(args)]) : Promise.resolve('');
  };
  const [badOut, ...outs] = await Promise.all([BAD_CALL, ...Object.values(VALID_CALLS)].map(call));
  const valid = outs.filter((out) => out.includes('dry_run') && !/"isError":\s*true/.test(out)).length;
  const errorIntact = badOut.includes('FIELD_NOT_ON_CHANNEL');
  const schemas = tools.filter((t) => /^send_/.test(t.name)).map((t) => t.inputSchema);
  return {
    accepted,
    rulesKept: rulesKept(schemas),
    valid: `${valid}/3`,
    errorIntact,
    note: errorIntact ? '' : `the caller got: ${badOut.split('\n')[0].slice(0, 120)}`,
  };
}
