/** PostgreSQL's banner insert (the dedupe key under an advisory lock) and listing (a LATERAL walk per audience): the banners port. */
import type pg from 'pg';
import { bannerStatusSql } from '../banner-status.js';
import type { BannerRecord, BannersPort, BannerStatus } from '../ports/banners.js';
import { bannerFromRow, type Row } from '../sql/rows.js';
import { bannerValues } from '../sql/shared.js';
import * as q from '../sql/statements.js';
import { withClient } from './connection.js';
import type { PgEngine } from './engine.js';

const { BANNER_COLUMNS } = q;

/** The banner insert and listing, over engine `e`. */
export function postgresBanners(e: PgEngine): Pick<BannersPort, 'insertBanner' | 'listBanners'> {
  return {
    insertBanner: (...a) => insertBanner(e, ...a),
    listBanners: (...a) => listBanners(e, ...a),
  };
}

async function insertBanner(e: PgEngine, b: BannerRecord): Promise<BannerRecord> {
  const insert = (db: pg.Pool | pg.PoolClient) => db.query({ ...q.INSERT_BANNER, values: bannerValues(b) });
  const dedupeKey = b.dedupe_key;
  if (dedupeKey === null) {
    await insert(e.pool);
    return { ...b };
  }
  return withClient(e.pool, e.log, async (client) => {
    try {
      await client.query('BEGIN');
      // Serialises writers of this audience's dedupe key only; released at COMMIT/ROLLBACK.
      await client.query(`SELECT pg_advisory_xact_lock(hashtext(json_build_array('notify-mcp:banner-dedupe', $1::text, $2::text)::text))`, [
        b.audience,
        dedupeKey,
      ]);
      const { rows } = await client.query({ ...q.ACTIVE_BY_DEDUPE, values: [b.audience, dedupeKey, b.created_at] });
      const existing = rows[0] ? bannerFromRow(rows[0] as Row) : null;
      if (existing) {
        await client.query('COMMIT');
        return existing;
      }
      await insert(client);
      await client.query('COMMIT');
      return { ...b };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  });
}

async function listBanners(
  e: PgEngine,
  query: { audiences?: string[]; status?: BannerStatus; now: number; limit?: number },
): Promise<BannerRecord[]> {
  const params: unknown[] = [query.now, query.limit ?? null];
  const status = query.status !== undefined ? `AND ${bannerStatusSql(query.status, '$1')}` : '';
  let sql: string;
  if (query.audiences !== undefined) {
    // One index walk per audience, each stopping after `limit` rows (LATERAL … LIMIT), then
    // a sort of at most audiences × limit rows: `audience = ANY(…) ORDER BY` would read and
    // sort every matching row. Each banner has one audience, so the walks are disjoint.
    params.push([...new Set(query.audiences)]);
    sql = `SELECT ${BANNER_COLUMNS.split(', ')
      .map((c) => `b.${c}`)
      .join(', ')} FROM unnest($3::text[]) AS a(name)
           CROSS JOIN LATERAL (
             SELECT seq, ${BANNER_COLUMNS} FROM banners
             WHERE audience = a.name AND $1::bigint IS NOT NULL ${status}
             ORDER BY created_at DESC, seq DESC LIMIT $2
           ) AS b
           ORDER BY created_at DESC, seq DESC LIMIT $2`;
  } else {
    // $1 is referenced even without a status filter, so its type is always known.
    sql = `SELECT ${BANNER_COLUMNS} FROM banners WHERE $1::bigint IS NOT NULL ${status}
           ORDER BY created_at DESC, seq DESC LIMIT $2`;
  }
  const { rows } = await e.pool.query(sql, params);
  return rows.map((r) => bannerFromRow(r as Row));
}
