#!/usr/bin/env node
/**
 * The providers' stand-ins for the live-send bench, in a process of their own: smtp-server,
 * a fake Twilio, a fake Slack (JSON answers) and a webhook receiver. Apart from the bench process because a real
 * provider is: with the peers inside the bench, the library's send never left its process
 * while notify-mcp's crossed to the bench and back, so a loaded machine's wake-ups landed on
 * one side only. Prints one JSON line of origins, then serves until its stdin closes.
 */
import { createServer } from 'node:http';
import { SMTPServer } from 'smtp-server';

function fakeJson(body) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(req.url?.includes('/Messages.json') ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body()));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)));
}

function smtpPeer() {
  const server = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false, disableReverseLookup: true, onData(stream, _s, cb) { stream.resume(); stream.on('end', () => cb()); } });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.server.address().port)));
}

let n = 0;
const smtpPort = await smtpPeer();
const twilio = await fakeJson(() => ({ sid: `SM${String(++n).padStart(32, '0')}`, status: 'queued' }));
const slack = await fakeJson(() => ({ ok: true, channel: 'C0123ABCD', ts: `1712345678.${String(++n).padStart(6, '0')}` }));
const webhook = await fakeJson(() => ({}));
process.stdout.write(`${JSON.stringify({ smtpPort, twilio, slack, webhook })}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
