import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { Db, Queryable, Tx } from '@/db/client';
import { prepareSql, reusableQuery } from '@/db/reusable-query';
import { auditLog } from '@/db/schema';
import { names } from '@/db/sql-names';
import type { Clock } from '@/server/platform/clock';
import {
  type Cursor,
  cursorPosition,
  keysetAfter,
  keysetOrder,
  keysetPage,
  PAGE_SIZE,
} from '@/server/platform/pagination';

/** Who did something in the console, and from where. */
export interface AuditActor {
  userId: string | null;
  email: string;
  ipAddress: string | null;
  userAgent: string | null;
}

/** The service itself, for what its jobs do on a team's behalf (erasing a vendor's copy). */
export const SYSTEM_ACTOR: AuditActor = {
  userId: null,
  email: 'Vouch (system)',
  ipAddress: null,
  userAgent: null,
};

/** The operator, for what the operator CLI changes in a team (`oidc-clients create`…). */
export const OPERATOR_ACTOR: AuditActor = {
  userId: null,
  email: 'Vouch operator (CLI)',
  ipAddress: null,
  userAgent: null,
};

/**
 * Records a console change. Call it in the same transaction as the change, so the log never
 * shows something that did not happen (nor misses something that did).
 */
export async function recordAudit(
  db: Queryable,
  entry: AuditEntry & { teamId: string; actor: AuditActor; at: Date },
): Promise<void> {
  await recordAudits(db, [entry]);
}

/** An entry as `insertAuditEntriesFrom` reads it. */
export interface NewAuditRow {
  created_at: string;
  team_id: string;
  actor_user_id: string | null;
  actor_email: string;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
  ip_address: string | null;
  user_agent: string | null;
}

/** Entries as their rows: see recordAudits. */
export function auditRows(
  entries: ReadonlyArray<AuditEntry & { teamId: string; actor: AuditActor; at: Date }>,
): NewAuditRow[] {
  return entries.map((entry) => ({
    // The clock's instant (milliseconds), not the database's now() (microseconds): the log's
    // page cursor carries a JS Date, which would fall between entries of the same millisecond
    // and skip them.
    created_at: entry.at.toISOString(),
    team_id: entry.teamId,
    actor_user_id: entry.actor.userId,
    actor_email: entry.actor.email,
    action: entry.action,
    target: entry.target ?? null,
    details: entry.details ?? {},
    ip_address: entry.actor.ipAddress,
    user_agent: entry.actor.userAgent,
  }));
}

/**
 * Entries written from a JSON array of `NewAuditRow`, as a statement's body (or one CTE's of a
 * creation's writes). Their chain is sealed later (audit-chain.ts).
 */
export function insertAuditEntriesFrom(rows: SQL): SQL {
  return sql`
    insert into ${auditLog} (${names(
      auditLog.createdAt,
      auditLog.teamId,
      auditLog.actorUserId,
      auditLog.actorEmail,
      auditLog.action,
      auditLog.target,
      auditLog.details,
      auditLog.ipAddress,
      auditLog.userAgent,
    )})
    select a.created_at, a.team_id, a.actor_user_id, a.actor_email, a.action, a.target, a.details, a.ip_address,
           a.user_agent
    from jsonb_to_recordset(${rows}) as a(created_at timestamptz, team_id uuid, actor_user_id text, actor_email text,
      action text, target text, details jsonb, ip_address text, user_agent text)
  `;
}

/**
 * Any number of entries in one statement, built once per process: most changes record one, and
 * building the statement cost drizzle more CPU than PostgreSQL spent running it.
 */
const insertAuditEntries = reusableQuery((db) =>
  prepareSql(db, insertAuditEntriesFrom(sql`${sql.placeholder('entries')}::jsonb`), 'insert_audit_entries'),
);

/** Several entries in one statement (a batch of cases, each audited as if created alone). */
export async function recordAudits(
  db: Queryable,
  entries: ReadonlyArray<AuditEntry & { teamId: string; actor: AuditActor; at: Date }>,
): Promise<void> {
  if (entries.length === 0) return;
  await insertAuditEntries(db).execute({ entries: JSON.stringify(auditRows(entries)) });
}

/** What a change says of itself in the log; who made it comes from the request. */
export interface AuditEntry {
  action: string;
  target?: string;
  details?: Record<string, unknown>;
}

/**
 * A console change and its audit entry, committed together, so the log shows exactly the changes
 * that happened. `entry` words the entry from what the change returned.
 */
export function auditedChange<T>(
  ctx: { db: Db; teamId: string; actor: AuditActor; clock: Clock },
  change: (tx: Tx) => Promise<T>,
  entry: (result: T) => AuditEntry,
): Promise<T> {
  return ctx.db.transaction(async (tx) => {
    const result = await change(tx);
    await recordAudit(tx, { teamId: ctx.teamId, actor: ctx.actor, at: ctx.clock(), ...entry(result) });
    return result;
  });
}

export const AUDIT_PAGE_SIZE = PAGE_SIZE;

/**
 * One page of a team's audit log, newest first, after `before` (server/platform/pagination.ts, as
 * every list; the console walks it forward only).
 */
export async function listAudit(
  db: Queryable,
  teamId: string,
  before: { createdAt: Date; id: string } | null,
) {
  const cursor: Cursor | null = before ? { ...before, direction: 'next' } : null;
  const rows = await db
    .select()
    .from(auditLog)
    .where(
      and(
        eq(auditLog.teamId, teamId),
        cursor ? keysetAfter(auditLog, 'next', cursorPosition(cursor)) : undefined,
      ),
    )
    .orderBy(...keysetOrder(auditLog, 'next'))
    .limit(PAGE_SIZE + 1);
  const page = keysetPage(rows, cursor);
  const last = page.results.at(-1);
  return {
    entries: page.results,
    next: page.nextCursor && last ? { createdAt: last.createdAt, id: last.id } : null,
  };
}
