import canonicalize from 'canonicalize';
import { and, asc, eq, gt, isNotNull, isNull, sql } from 'drizzle-orm';
import type { JWK } from 'jose';
import type { Db, Queryable } from '@/db/client';
import { auditChainHeads, auditLog } from '@/db/schema';
import { name } from '@/db/sql-names';
import { isRedactionPlaceholder } from '@/server/platform/redaction-placeholders';
import { verifiedClaims } from '@/server/signing/sign';
import { teamEvidenceKey } from '@/server/teams/team-secrets';
import { chainHash, keyedHash } from './chain-hash';

/*
 * The audit log is hash-chained per team (decisions: "Evidence records and signing keys"). Each
 * entry's `hash` is SHA-256 of the RFC 8785 canonical JSON of {seq, prev, entry}: its place in the
 * chain, the hash before it, and the entry as sealed, in which every personal or free-text value
 * (the actor's address, the client's address and agent, each string of the details) stands as an
 * HMAC keyed with the team's evidence key. Redaction may then replace a value in the row without
 * touching what the chain covers, and whoever holds the key and a value can check it.
 *
 * Entries are sealed by a worker job a few seconds after they are written, in the order the job
 * finds them committed, so that writing an audit entry never waits for the team's chain.
 */

type AuditRow = typeof auditLog.$inferSelect;

/** The `typ` of a signed checkpoint: where a team's chain starts once retention deleted its start. */
export const CHECKPOINT_TYP = 'vouch-audit-checkpoint';

function keyedStrings(value: unknown, key: Buffer): unknown {
  if (typeof value === 'string') return keyedHash(key, value);
  if (Array.isArray(value)) return value.map((item) => keyedStrings(item, key));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, keyedStrings(item, key)]));
  }
  return value;
}

/** The entry as the chain covers it. */
export function sealedForm(row: AuditRow, key: Buffer): Record<string, unknown> {
  return {
    v: 1,
    id: row.id,
    team: row.teamId,
    at: row.createdAt.toISOString(),
    actor: { user: row.actorUserId, email: keyedHash(key, row.actorEmail) },
    action: row.action,
    target: row.target,
    details: keyedStrings(row.details, key),
    ip: row.ipAddress === null ? null : keyedHash(key, row.ipAddress),
    agent: row.userAgent === null ? null : keyedHash(key, row.userAgent),
  };
}

/** An entry's place in its team's chain, as the sealing statement reads it. */
interface SealRow {
  id: string;
  chain_seq: number;
  sealed: Record<string, unknown>;
  prev_hash: string | null;
  hash: string;
}

/** How many entries one transaction seals. */
const SEAL_BATCH = 500;

/**
 * Seals the team's entries not yet in its chain, oldest first, under the lock of the team's chain
 * head (two sealers of one team take turns; teams are sealed independently). Returns how many.
 */
export async function sealTeamChain(db: Db, teamId: string): Promise<number> {
  const key = await teamEvidenceKey(db, teamId);
  return db.transaction(async (tx) => {
    await tx.insert(auditChainHeads).values({ teamId }).onConflictDoNothing();
    const [head] = await tx
      .select()
      .from(auditChainHeads)
      .where(eq(auditChainHeads.teamId, teamId))
      .for('update');
    if (!head) throw new Error(`no chain head for team ${teamId}`);
    const rows = await tx
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.teamId, teamId), isNull(auditLog.hash)))
      .orderBy(asc(auditLog.createdAt), asc(auditLog.id))
      .limit(SEAL_BATCH)
      .for('update');
    let { seq, hash: prev } = head;
    const seals: SealRow[] = [];
    for (const row of rows) {
      seq += 1;
      const sealed = sealedForm(row, key);
      const hash = chainHash(seq, prev, sealed);
      seals.push({ id: row.id, chain_seq: seq, sealed, prev_hash: prev, hash });
      prev = hash;
    }
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent; with no row sealed the head would be set to the values it holds, and the guard only saves these statements.
    if (rows.length > 0) {
      // Every entry's seal in one statement (one per entry cost the worker a round trip and a
      // statement built each time), beside the head's new place.
      await tx.execute(sql`
        update ${auditLog} set ${name(auditLog.chainSeq)} = s.chain_seq, ${name(auditLog.sealed)} = s.sealed,
          ${name(auditLog.prevHash)} = s.prev_hash, ${name(auditLog.hash)} = s.hash
        from jsonb_to_recordset(${JSON.stringify(seals)}::jsonb)
          as s(id uuid, chain_seq bigint, sealed jsonb, prev_hash text, hash text)
        where ${auditLog.id} = s.id`);
      await tx.update(auditChainHeads).set({ seq, hash: prev }).where(eq(auditChainHeads.teamId, teamId));
    }
    return rows.length;
  });
}

/** The sealing job's run: every team with entries to seal, until none is left. */
export async function sealAuditChains(db: Db): Promise<number> {
  const teams = await db
    .selectDistinct({ teamId: auditLog.teamId })
    .from(auditLog)
    .where(isNull(auditLog.hash));
  let sealed = 0;
  for (const { teamId } of teams) {
    for (;;) {
      const count = await sealTeamChain(db, teamId);
      sealed += count;
      // Stryker disable next-line EqualityOperator: equivalent; a batch exactly full is followed by an empty one either way, and both end the loop with every entry sealed.
      if (count < SEAL_BATCH) break;
    }
  }
  return sealed;
}

/** The first place the chain does not hold, as `audit verify` names it. */
export interface ChainBreak {
  entryId: string | null;
  seq: number | null;
  reason: string;
}

export interface ChainReport {
  teamId: string;
  /** Entries checked, and the last place sealed. */
  entries: number;
  sealedThrough: number;
  broken: ChainBreak | null;
}

/**
 * Where a sealed entry's row and its sealed form disagree: null when they agree, or differ only
 * where redaction left its placeholder (the sealed HMAC stands for the erased value).
 */
function contentChange(row: AuditRow, sealed: Record<string, unknown>, key: Buffer): string | null {
  const now = sealedForm(row, key);
  const differences: string[] = [];
  const compare = (path: string, live: unknown, kept: unknown, raw: unknown) => {
    if (canonicalize(live) === canonicalize(kept)) return;
    if (
      typeof raw === 'string' &&
      isRedactionPlaceholder(raw) &&
      typeof kept === 'string' &&
      kept.startsWith('hmac:')
    ) {
      return;
    }
    if (
      live &&
      kept &&
      typeof live === 'object' &&
      typeof kept === 'object' &&
      raw &&
      typeof raw === 'object'
    ) {
      const names = new Set([...Object.keys(live), ...Object.keys(kept)]);
      for (const name of names) {
        compare(
          `${path}.${name}`,
          (live as Record<string, unknown>)[name],
          (kept as Record<string, unknown>)[name],
          (raw as Record<string, unknown>)[name],
        );
      }
      return;
    }
    differences.push(path);
  };
  const raw: Record<string, unknown> = {
    ...now,
    actor: { user: row.actorUserId, email: row.actorEmail },
    details: row.details,
    ip: row.ipAddress,
    agent: row.userAgent,
  };
  for (const name of new Set([...Object.keys(now), ...Object.keys(sealed)])) {
    compare(name, now[name], sealed[name], raw[name]);
  }
  return differences.length > 0 ? differences.join(', ') : null;
}

/**
 * Walks the team's chain from its start (or its checkpoint, once retention cut the start, signed by
 * one of `keys`, the published key set): each entry in its place, naming its predecessor's hash,
 * hashing to what it states, its row still saying what was sealed (but for redaction's
 * placeholders), and the head where the last entry is.
 */
export async function verifyAuditChain(db: Queryable, teamId: string, keys: JWK[]): Promise<ChainReport> {
  const key = await teamEvidenceKey(db, teamId);
  const [head] = await db.select().from(auditChainHeads).where(eq(auditChainHeads.teamId, teamId));
  let expected = (head?.checkpointSeq ?? 0) + 1;
  let prev = head?.checkpointHash ?? null;
  let entries = 0;
  const report = (broken: ChainBreak | null): ChainReport => ({
    teamId,
    entries,
    sealedThrough: expected - 1,
    broken,
  });
  if (head?.checkpointSeq != null) {
    const claims = head.checkpointJws ? await verifiedClaims(head.checkpointJws, CHECKPOINT_TYP, keys) : null;
    const says = { team: teamId, seq: head.checkpointSeq, hash: head.checkpointHash };
    if (canonicalize(claims) !== canonicalize(says)) {
      return report({
        entryId: null,
        seq: head.checkpointSeq,
        reason:
          'the checkpoint where the remaining chain starts is not signed by a published key for this place and hash',
      });
    }
  }
  for (;;) {
    const rows = await db
      .select()
      .from(auditLog)
      .where(
        and(eq(auditLog.teamId, teamId), isNotNull(auditLog.chainSeq), gt(auditLog.chainSeq, expected - 1)),
      )
      .orderBy(asc(auditLog.chainSeq))
      .limit(1000);
    for (const row of rows) {
      const at = { entryId: row.id, seq: row.chainSeq };
      if (row.chainSeq !== expected) {
        return report({
          ...at,
          reason: `entry ${expected} is missing: the chain goes from ${expected - 1} to ${row.chainSeq}`,
        });
      }
      if (row.prevHash !== prev) {
        return report({ ...at, reason: `its stated predecessor hash is not entry ${expected - 1}'s hash` });
      }
      if (!row.sealed || row.hash !== chainHash(expected, row.prevHash, row.sealed)) {
        return report({ ...at, reason: 'its hash does not match its sealed content and stated predecessor' });
      }
      const changed = contentChange(row, row.sealed, key);
      if (changed) return report({ ...at, reason: `its row was changed after it was sealed (${changed})` });
      prev = row.hash;
      expected += 1;
      entries += 1;
    }
    if (rows.length < 1000) break;
  }
  if (head && (head.seq !== expected - 1 || head.hash !== prev) && head.seq > (head.checkpointSeq ?? 0)) {
    return report({
      entryId: null,
      seq: head.seq,
      reason: `the chain ends at entry ${expected - 1}, but its head says ${head.seq}: entries were removed`,
    });
  }
  return report(null);
}

/** Every team with a chain, for `audit verify` without --team. */
export async function chainedTeams(db: Queryable): Promise<string[]> {
  const rows = await db.select({ teamId: auditChainHeads.teamId }).from(auditChainHeads).orderBy(sql`1`);
  return rows.map((row) => row.teamId);
}
