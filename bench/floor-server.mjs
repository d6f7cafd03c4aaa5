#!/usr/bin/env node
/**
 * The dry-run floor (issue 28 item 7): bench/bare-server.mjs's one tool, plus one durable
 * SQLite insert per call, the least a server that keeps a record of each call must do
 * (better-sqlite3, WAL, synchronous=NORMAL, one prepared statement). Served over stdio.
 *
 *   NOTIFY_DATA_DIR=DIR node bench/floor-server.mjs     (the database is DIR/floor.db)
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import Database from 'better-sqlite3';
import { TOOL } from './bare-server.mjs';

const db = new Database(join(process.env.NOTIFY_DATA_DIR ?? '.', 'floor.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS calls (id TEXT PRIMARY KEY, via TEXT NOT NULL, payload TEXT NOT NULL, at TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO calls (id, via, payload, at) VALUES (?, ?, ?, ?)');

function createFloorServer() {
  const server = new Server({ name: 'floor', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', async () => ({ tools: [TOOL] }));
  server.setRequestHandler('tools/call', async (request) => {
    const args = request.params.arguments ?? {};
    const result = {
      id: `ntf_${randomUUID().replaceAll('-', '')}`,
      via: String(args.via ?? 'email'),
      status: 'dry_run',
      provider: 'dry-run',
      accepted_at: new Date().toISOString(),
    };
    insert.run(result.id, result.via, JSON.stringify(args), result.accepted_at);
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  });
  return server;
}

serveStdio(() => createFloorServer());
