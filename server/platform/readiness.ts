import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import postgres from 'postgres';
import { CONNECTION_OPTIONS, MIGRATIONS_FOLDER, postgresTarget } from '@/db/client';

/**
 * Whether a process should be sent work (`GET /readyz`), apart from whether it lives (`GET
 * /livez`, which never touches the database: a database outage must not get every healthy pod
 * restarted). Unready for coarse reasons only, none of which names anything of the deployment:
 *
 * - `database`: the database did not answer a trivial query within READINESS_TIMEOUT_MS;
 * - `schema`: it answered, but the migrations this release expects have not all run (a process
 *   started with MIGRATE_ON_START=false waits for `vouch migrate`);
 * - `draining`: the process was told to stop and is finishing what it has.
 */
export type UnreadyReason = 'database' | 'schema' | 'draining';

/** A check answers within this, whatever the database does (probes time out at 2 s or more). */
export const READINESS_TIMEOUT_MS = 1_500;

/** The newest migration this build carries: drizzle records each applied one by its `when`. */
export function expectedMigrationMillis(folder = MIGRATIONS_FOLDER): number {
  const journal = JSON.parse(readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ when: number }>;
  };
  return Math.max(0, ...journal.entries.map((entry) => entry.when));
}

/** Whether the database holds every migration up to `expected` (drizzle's own record of them). */
export async function schemaIsCurrent(sql: postgres.Sql, expected: number): Promise<boolean> {
  try {
    const [row] = await sql<Array<{ applied: string | null }>>`
      select max(created_at)::text as applied from drizzle.__drizzle_migrations`;
    return Number(row?.applied ?? 0) >= expected;
  } catch (error) {
    // No migration table (or schema) yet: the database answers, the schema is not there.
    if (['42P01', '3F000'].includes((error as { code?: string }).code ?? '')) return false;
    throw error;
  }
}

export interface ReadinessProbe {
  /** The reasons the process is unready now, none when ready; answers within READINESS_TIMEOUT_MS. */
  check(): Promise<UnreadyReason[]>;
  /** From now on unready: the process stops taking work. */
  markDraining(): void;
  readonly draining: boolean;
  close(): Promise<void>;
}

/**
 * A process's readiness against the database at `url`, on a connection of its own (so a pool
 * busy with requests or jobs does not make the probe wait, and the probe never takes one of
 * theirs). Unprepared statements: it works behind a transaction pooler too. Once the schema was
 * seen current it is not asked again (migrations only ever add).
 */
export function readinessProbe(url: string, options: { expectedMigration?: number } = {}): ReadinessProbe {
  const expected = options.expectedMigration ?? expectedMigrationMillis();
  const target = postgresTarget(url);
  const sql = postgres(target.url, {
    ...(target.host ? { host: target.host } : {}),
    ...CONNECTION_OPTIONS,
    max: 1,
    prepare: false,
    connect_timeout: 2,
    idle_timeout: 60,
  });
  let draining = false;
  let schemaSeen = false;

  async function databaseReasons(): Promise<UnreadyReason[]> {
    if (schemaSeen) {
      await sql`select 1`;
      return [];
    }
    schemaSeen = await schemaIsCurrent(sql, expected);
    return schemaSeen ? [] : ['schema'];
  }

  return {
    get draining() {
      return draining;
    },
    markDraining() {
      draining = true;
    },
    async check() {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<UnreadyReason[]>((resolve) => {
        timer = setTimeout(() => resolve(['database']), READINESS_TIMEOUT_MS);
      });
      const reasons = await Promise.race([
        databaseReasons().catch((): UnreadyReason[] => ['database']),
        timedOut,
      ]).finally(() => clearTimeout(timer));
      return draining ? ['draining', ...reasons] : reasons;
    },
    close: () => sql.end({ timeout: 1 }),
  };
}

/** `/livez` and `/readyz` as every process answers them: JSON, never cached. */
export async function healthAnswer(
  pathname: string,
  probe: ReadinessProbe | undefined,
): Promise<{ status: number; body: string } | null> {
  if (pathname === '/livez') return { status: 200, body: '{"status":"live"}' };
  if (pathname !== '/readyz') return null;
  // Before the database is connected (a process still starting), it is the database that is missing.
  const reasons = probe ? await probe.check() : (['database'] as UnreadyReason[]);
  return reasons.length === 0
    ? { status: 200, body: '{"status":"ready"}' }
    : { status: 503, body: JSON.stringify({ status: 'unready', reasons }) };
}

export const HEALTH_HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };

/**
 * Answers a GET or HEAD of `/livez` or `/readyz` on `res`, as every process's HTTP server does;
 * whether the request was one (anything else is left to the caller).
 */
export function answerHealth(
  req: IncomingMessage,
  res: ServerResponse,
  probe: ReadinessProbe | undefined,
): boolean {
  const pathname = (req.url ?? '/').split('?')[0] ?? '/';
  if ((req.method !== 'GET' && req.method !== 'HEAD') || (pathname !== '/livez' && pathname !== '/readyz')) {
    return false;
  }
  healthAnswer(pathname, probe).then(
    (answer) => {
      res.writeHead(answer?.status ?? 404, HEALTH_HEADERS);
      res.end(req.method === 'HEAD' ? undefined : answer?.body);
    },
    () => res.destroy(),
  );
  return true;
}
