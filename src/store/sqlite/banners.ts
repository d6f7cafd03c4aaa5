/** SQLite's banner insert (deduplicated in an immediate transaction) and listing (an index walk per audience): the banners port. */
import type Database from 'better-sqlite3';
import { bannerStatusSql } from '../banner-status.js';
import type { BannerRecord, BannersPort, BannerStatus } from '../ports/banners.js';
import { bannerFromRow } from '../sql/rows.js';
import { bannerValues } from '../sql/shared.js';
import * as q from '../sql/statements.js';
import type { SqliteEngine } from './engine.js';

const { BANNER_COLUMNS } = q;

/** Audience lists up to this long get one index walk each (SQLite caps a compound SELECT at 500 terms). */
const AUDIENCE_WALKS = 16;

/** The banner insert and listing, over engine `e`. */
export function sqliteBanners(e: SqliteEngine): Pick<BannersPort, 'insertBanner' | 'listBanners'> {
  /** The feed's statements by (status, audience count), so a hit does not rebuild the SQL. */
  const byAudience = new Map<string, Database.Statement>();
  return {
    insertBanner: (...a) => insertBanner(e, ...a),
    listBanners: (...a) => listBanners(e, byAudience, ...a),
  };
}

async function insertBanner(e: SqliteEngine, b: BannerRecord): Promise<BannerRecord> {
  const tx = e.db.transaction((): BannerRecord => {
    if (b.dedupe_key !== null) {
      const existing = activeByDedupe(e, b.audience, b.dedupe_key, b.created_at);
      if (existing) return existing;
    }
    e.shared(q.INSERT_BANNER).run(bannerValues(b));
    return { ...b };
  });
  return tx.immediate();
}

function activeByDedupe(e: SqliteEngine, audience: string, dedupeKey: string, now: number): BannerRecord | null {
  const row = e.shared(q.ACTIVE_BY_DEDUPE).get([audience, dedupeKey, now]);
  return row ? bannerFromRow(row) : null;
}

async function listBanners(
  e: SqliteEngine,
  byAudience: Map<string, Database.Statement>,
  query: { audiences?: string[]; status?: BannerStatus; now: number; limit?: number },
): Promise<BannerRecord[]> {
  const limit = query.limit ?? -1;
  if (query.audiences !== undefined)
    return listBannersByAudience(e, byAudience, [...new Set(query.audiences)], query.status, query.now, limit);
  const params = { now: query.now, limit };
  const where = query.status !== undefined ? `WHERE ${bannerStatusSql(query.status, '@now')}` : '';
  const sql = `SELECT ${BANNER_COLUMNS} FROM banners ${where} ORDER BY created_at DESC, seq DESC LIMIT @limit`;
  return e.statement(sql).all(params) as BannerRecord[];
}

/**
 * One index walk per audience, each stopping after `limit` rows, combined by UNION ALL
 * and cut to `limit` in SQL, so only the answer is materialised: `audience IN (…) ORDER
 * BY` would, with any index but one ending in `seq DESC`, read and sort every matching
 * row. Each banner has one audience, so the walks are disjoint. A list longer than
 * AUDIENCE_WALKS (rare: apps pass a viewer's few segments) takes the IN form on the same
 * index, where SQLite's ORDER BY LIMIT optimisation usually stops each walk early too.
 */
function listBannersByAudience(
  e: SqliteEngine,
  byAudience: Map<string, Database.Statement>,
  audiences: string[],
  status: BannerStatus | undefined,
  now: number,
  limit: number,
): BannerRecord[] {
  if (audiences.length === 0) return [];
  const params: Record<string, unknown> = status !== undefined ? { now, limit } : { limit };
  if (audiences.length > AUDIENCE_WALKS) {
    params.audiences = JSON.stringify(audiences);
    return byAudienceStatement(e, byAudience, status, 0).all(params) as BannerRecord[];
  }
  audiences.forEach((audience, j) => (params[`a${j}`] = audience));
  return byAudienceStatement(e, byAudience, status, audiences.length).all(params) as BannerRecord[];
}

/** `audiences` 0: the IN form over a JSON array. */
function byAudienceStatement(
  e: SqliteEngine,
  byAudience: Map<string, Database.Statement>,
  status: BannerStatus | undefined,
  audiences: number,
): Database.Statement {
  const key = `${status ?? 'any'}:${audiences}`;
  let stmt = byAudience.get(key);
  if (!stmt) {
    // INDEXED BY makes a plan that cannot use the index an error, not a silent full sort.
    const from = `FROM banners INDEXED BY ${status === 'active' ? 'banners_active' : 'banners_newest'}`;
    const filter = status !== undefined ? `AND ${bannerStatusSql(status, '@now')}` : '';
    const order = 'ORDER BY created_at DESC, seq DESC LIMIT @limit';
    const walks = Array.from(
      { length: audiences },
      (_, j) => `SELECT * FROM (SELECT seq, ${BANNER_COLUMNS} ${from} WHERE audience = @a${j} ${filter} ${order})`,
    );
    stmt = e.statement(
      audiences === 0
        ? `SELECT ${BANNER_COLUMNS} ${from} WHERE audience IN (SELECT value FROM json_each(@audiences)) ${filter} ${order}`
        : `SELECT ${BANNER_COLUMNS} FROM (${walks.join(' UNION ALL ')}) ${order}`,
    );
    byAudience.set(key, stmt);
  }
  return stmt;
}
