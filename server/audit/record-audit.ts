import { and, eq, sql } from 'drizzle-orm';
import type { Db, Queryable, Tx } from '@/db/client';
import { reusableQuery } from '@/db/reusable-query';
import { auditLog } from '@/db/schema';
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

/** An entry as its row: see recordAudits. */
function auditRow(entry: AuditEntry & { teamId: string; actor: AuditActor; at: Date }) {
  return {
    // The clock's instant (milliseconds), not the database's now() (microseconds): the log's
    // page cursor carries a JS Date, which would fall between entries of the same millisecond
    // and skip them.
    createdAt: entry.at,
    teamId: entry.teamId,
    actorUserId: entry.actor.userId,
    actorEmail: entry.actor.email,
    action: entry.action,
    target: entry.target ?? null,
    details: entry.details ?? {},
    ipAddress: entry.actor.ipAddress,
    userAgent: entry.actor.userAgent,
  };
}

/**
 * One entry's insert, built once per process: most changes record one, every API creation among
 * them, and building the statement cost drizzle more CPU than PostgreSQL spent running it.
 */
const insertAuditEntry = reusableQuery((db) =>
  db
    .insert(auditLog)
    .values({
      createdAt: sql.placeholder('createdAt'),
      teamId: sql.placeholder('teamId'),
      actorUserId: sql.placeholder('actorUserId'),
      actorEmail: sql.placeholder('actorEmail'),
      action: sql.placeholder('action'),
      target: sql.placeholder('target'),
      details: sql.placeholder('details'),
      ipAddress: sql.placeholder('ipAddress'),
      userAgent: sql.placeholder('userAgent'),
    })
    // Stryker disable next-line StringLiteral: equivalent; the name only labels the statement each connection prepares once.
    .prepare('insert_audit_entry'),
);

/** Several entries in one statement (a batch of cases, each audited as if created alone). */
export async function recordAudits(
  db: Queryable,
  entries: ReadonlyArray<AuditEntry & { teamId: string; actor: AuditActor; at: Date }>,
): Promise<void> {
  const [only] = entries;
  if (!only) return;
  if (entries.length === 1) await insertAuditEntry(db).execute(auditRow(only));
  else await db.insert(auditLog).values(entries.map(auditRow));
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
