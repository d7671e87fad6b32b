import { millisecondsInDay, millisecondsInMinute } from 'date-fns/constants';
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { Db, Tx } from '@/db/client';
import { idempotencyKeys } from '@/db/schema';
import type { Clock } from '@/server/platform/clock';
import { hmacSha256Hex } from '@/server/platform/crypto';
import { AppError } from '@/server/platform/errors';
import { teamHmacKey } from '@/server/teams/team-secrets';

export const IDEMPOTENCY_KEY_MAX_LENGTH = 64;
const REPLAY_WINDOW_MS = millisecondsInDay;
/**
 * A request that holds a key longer than this is presumed dead (its process crashed before it
 * could commit or release the key); the next request with the key takes it over. Nothing it did
 * survived, because the response is stored in the same transaction as the work.
 */
const STALE_LOCK_MS = millisecondsInMinute;

/** Printable ASCII, 1–64 characters; anything else is 400 INVALID_IDEMPOTENCY_KEY. */
export function parseIdempotencyKey(header: string | null): string | null {
  if (header === null) return null;
  if (header.length === 0 || header.length > IDEMPOTENCY_KEY_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(header)) {
    throw new AppError(
      'INVALID_IDEMPOTENCY_KEY',
      `The Idempotency-Key header must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable characters without spaces.`,
    );
  }
  return header;
}

/** Key order does not matter: `{a,b}` and `{b,a}` are the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export type IdempotentResult<T> =
  | { body: T; replayed: boolean }
  /**
   * A repeat of a request whose case was redacted since: the stored request and answer were
   * erased with the case, so the caller answers with the case as it now is (`caseId`).
   */
  | { body: null; replayed: true; caseId: string };

export interface IdempotencyScope<T> {
  teamId: string;
  /** Live and test requests keep their keys apart: one key may be used once in each mode. */
  livemode: boolean;
  key: string | null;
  operation: string;
  request: unknown;
  /** HTTP status of a success, stored with the body for the record. */
  status: number;
  /**
   * The cases a success created, kept on the record so that a case's redaction erases it: one case
   * (`caseId`: its redaction erases the whole answer, a repeat answers the case as it now is), or a
   * batch's (`caseIds`: a redaction scrubs that person's values from the answer).
   */
  casesOf: (body: T) => { caseId: string } | { caseIds: string[] };
}

/** A request's work: slow preparation outside any transaction, then the change that commits. */
export interface IdempotentWork<T, P> {
  /**
   * Runs only once the key is this request's (never for a repeat): slow work a replay must not
   * redo, such as hashing answers, and that must not run while the transaction holds locks.
   */
  prepare: () => Promise<P>;
  commit: (tx: Tx, prepared: P) => Promise<T>;
}

/**
 * Runs `work` at most once per (team, mode, key): the first request claims the key with an insert
 * that only one concurrent request can win, prepares, does its work in a transaction, and stores
 * its response in the same transaction as the work. A repeat gets the stored response; a repeat while the first
 * still runs gets 409 IDEMPOTENCY_KEY_IN_USE; another body under the same key gets 422
 * IDEMPOTENCY_KEY_REUSED. Failed requests release the key (errors are not stored).
 *
 * The request is kept only as an HMAC keyed with the team's secret: an unkeyed hash of a body
 * whose unknowns are few (a custom question's answer) gives them up to anyone who guesses and
 * hashes. A record without a hash (erased by its case's redaction, or kept from before hashes were
 * keyed) can no longer tell a repeat from another body: any request with its key is a repeat.
 */
export async function runIdempotent<T, P>(
  db: Db,
  scope: IdempotencyScope<T>,
  clock: Clock,
  work: IdempotentWork<T, P>,
): Promise<IdempotentResult<T>> {
  if (scope.key === null) {
    const prepared = await work.prepare();
    return { body: await db.transaction((tx) => work.commit(tx, prepared)), replayed: false };
  }
  const key = scope.key;
  const requestHash = hmacSha256Hex(await teamHmacKey(db, scope.teamId), canonicalJson(scope.request));
  const now = clock();
  const where = and(
    eq(idempotencyKeys.teamId, scope.teamId),
    eq(idempotencyKeys.livemode, scope.livemode),
    eq(idempotencyKeys.key, key),
  );

  const claimed = await db
    .insert(idempotencyKeys)
    .values({
      teamId: scope.teamId,
      livemode: scope.livemode,
      key,
      operation: scope.operation,
      requestHash,
      lockedAt: now,
      createdAt: now,
    })
    .onConflictDoNothing()
    .returning({ lockedAt: idempotencyKeys.lockedAt });

  let lockedAt: Date | null = claimed[0]?.lockedAt ?? null;
  if (!lockedAt) {
    const [existing] = await db.select().from(idempotencyKeys).where(where);
    if (!existing) {
      // The holder failed and released the key between our insert and our read: a fresh start.
      return runIdempotent(db, scope, clock, work);
    }
    if (now.getTime() - existing.createdAt.getTime() > REPLAY_WINDOW_MS) {
      throw new AppError('IDEMPOTENCY_KEY_EXPIRED');
    }
    if (
      (existing.requestHash !== null && existing.requestHash !== requestHash) ||
      existing.operation !== scope.operation
    ) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED');
    }
    if (existing.responseBody !== null) {
      return { body: existing.responseBody as T, replayed: true };
    }
    if (existing.caseId !== null) return { body: null, replayed: true, caseId: existing.caseId };
    const staleBefore = new Date(now.getTime() - STALE_LOCK_MS);
    const [takenOver] = await db
      .update(idempotencyKeys)
      .set({ lockedAt: now })
      .where(
        and(
          where,
          // Not one whose answer was erased with its case: that request did its work.
          isNull(idempotencyKeys.responseBody),
          isNull(idempotencyKeys.caseId),
          or(isNull(idempotencyKeys.lockedAt), lt(idempotencyKeys.lockedAt, staleBefore)),
        ),
      )
      .returning({ lockedAt: idempotencyKeys.lockedAt });
    if (!takenOver) {
      throw new AppError('IDEMPOTENCY_KEY_IN_USE', undefined, { 'Retry-After': '1' });
    }
    lockedAt = takenOver.lockedAt;
  }

  if (lockedAt === null) throw new Error('an idempotency key was claimed without a lock time');
  const ours: Date = lockedAt;
  try {
    const prepared = await work.prepare();
    const body = await db.transaction(async (tx) => {
      const result = await work.commit(tx, prepared);
      // Stored as the JSON the client receives, so a replay is byte-for-byte the same answer; and
      // only while the key is still ours. A preparation that waited past STALE_LOCK_MS (in the
      // slow-hash queue, say) may have been taken over by a client's retry: then the retry does
      // the work, and this transaction, work and all, is rolled back. (Checked here, at the end,
      // so that the key's row is not locked while the work runs: a repeat meanwhile is told the
      // key is in use at once rather than waiting for the lock.)
      const [stored] = await tx
        .update(idempotencyKeys)
        .set({
          responseBody: JSON.parse(JSON.stringify(result)),
          responseStatus: scope.status,
          ...scope.casesOf(result),
          lockedAt: null,
        })
        .where(and(where, isNull(idempotencyKeys.responseBody), eq(idempotencyKeys.lockedAt, ours)))
        .returning({ key: idempotencyKeys.key });
      if (!stored) throw new AppError('IDEMPOTENCY_KEY_IN_USE', undefined, { 'Retry-After': '1' });
      return result;
    });
    return { body, replayed: false };
  } catch (error) {
    await db
      .delete(idempotencyKeys)
      .where(and(where, isNull(idempotencyKeys.responseBody), eq(idempotencyKeys.lockedAt, ours)));
    throw error;
  }
}
