/**
 * The tamper-evident audit log (issue 29) against a real PostgreSQL: entries sealed into their
 * team's hash chain off the write path, in one order even with several sealers at once, personal
 * values only as keyed hashes in what the chain covers; `verifyAuditChain` names the first entry
 * edited, removed or re-hashed in the database, and a checkpoint not signed as one by a published
 * key; redaction's placeholders do not break it.
 */
import { createHash, createHmac } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { CompactSign, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditChainHeads, auditLog } from '@/db/schema';
import { CHECKPOINT_TYP, sealAuditChains, verifyAuditChain } from '@/server/audit/audit-chain';
import { purgeAudit, signCheckpointsAgain } from '@/server/audit/purge-audit';
import { type AuditActor, recordAudits } from '@/server/audit/record-audit';
import { systemClock } from '@/server/platform/clock';
import { ERASED, redactedEmail } from '@/server/platform/redaction-placeholders';
import { signClaims, signedBy } from '@/server/signing/sign';
import { keyEncryptionKey, publishedKeys, revokeSigningKey } from '@/server/signing/signing-keys';
import { createTeam } from '@/server/teams/manage-teams';
import { teamEvidenceKey } from '@/server/teams/team-secrets';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { rfc8785 } from '@/test/support/rfc8785';

let database: TestDatabase;
let teamId: string;
let otherTeamId: string;
const actor: AuditActor = {
  userId: null,
  email: 'helpdesk@chain.test',
  ipAddress: '198.51.100.7',
  userAgent: 'Firefox',
};

beforeAll(async () => {
  database = await createTestDatabase();
  teamId = (await createTeam(database.db, { name: 'Chain', adminEmail: 'owner@chain.test' }, systemClock))
    .team.id;
  otherTeamId = (
    await createTeam(database.db, { name: 'Other', adminEmail: 'owner@other.test' }, systemClock)
  ).team.id;
});

afterAll(async () => {
  await database?.close();
});

async function write(team: string, count: number, from = 0) {
  const base = Date.UTC(2026, 10, 1);
  await recordAudits(
    database.db,
    Array.from({ length: count }, (_, i) => ({
      teamId: team,
      actor,
      at: new Date(base + (from + i) * 1000),
      action: 'case.created',
      target: `case-${from + i}`,
      details: { subject_email: `person${from + i}@chain.test`, methods: ['email'], n: from + i },
    })),
  );
}

/** The documented keyed hash, computed here: `hmac:` and the base64url HMAC-SHA-256. */
const hmacOf = (key: Uint8Array, value: string) =>
  `hmac:${createHmac('sha256', key).update(value).digest('base64url')}`;

const kek = keyEncryptionKey('a-signing-key-secret-of-at-least-32-characters');
const verify = async (team: string) =>
  verifyAuditChain(database.db, team, await publishedKeys(database.db, new Date(), 365));

const chain = (team: string) =>
  database.db.select().from(auditLog).where(eq(auditLog.teamId, team)).orderBy(auditLog.chainSeq);

describe('the audit chain', () => {
  it('seals entries off the write path, once each and in one order, with several sealers at once', async () => {
    await write(teamId, 1200);
    await write(otherTeamId, 3);
    const before = await chain(teamId);
    expect(before.every((row) => row.hash === null)).toBe(true);
    const sealed = await Promise.all([
      sealAuditChains(database.db),
      sealAuditChains(database.db),
      sealAuditChains(database.db),
    ]);
    // Each entry sealed by exactly one of the three.
    expect(sealed.reduce((a, b) => a + b, 0)).toBe((await database.db.select().from(auditLog)).length);
    const rows = await chain(teamId);
    expect(rows.map((row) => row.chainSeq)).toEqual(rows.map((_, i) => i + 1));
    expect(rows[0]?.prevHash).toBeNull();
    for (const [i, row] of rows.entries()) {
      if (i > 0) expect(row.prevHash).toBe(rows[i - 1]?.hash);
      // Recomputed as documented, independently of the product's function: SHA-256 (hex) of the
      // RFC 8785 form of {seq, prev, entry}.
      expect(row.hash).toBe(
        createHash('sha256')
          .update(rfc8785({ seq: row.chainSeq, prev: row.prevHash, entry: row.sealed }))
          .digest('hex'),
      );
    }
    const [head] = await database.db.select().from(auditChainHeads).where(eq(auditChainHeads.teamId, teamId));
    expect(head).toMatchObject({ seq: rows.length, hash: rows.at(-1)?.hash });
  });

  it('covers personal values only as HMACs keyed with the team’s evidence key', async () => {
    const row = (await chain(teamId)).find((entry) => entry.target === 'case-0');
    if (!row) throw new Error('case-0 was not audited');
    const text = JSON.stringify(row?.sealed);
    expect(text).not.toContain('@chain.test');
    expect(text).not.toContain('198.51.100.7');
    const key = await teamEvidenceKey(database.db, teamId);
    expect(row?.sealed).toMatchObject({
      actor: { email: hmacOf(key, 'helpdesk@chain.test') },
      ip: hmacOf(key, '198.51.100.7'),
      details: {
        subject_email: hmacOf(key, 'person0@chain.test'),
        n: 0,
      },
    });
    // Another team's key gives other hashes for the same value.
    expect(hmacOf(await teamEvidenceKey(database.db, otherTeamId), 'helpdesk@chain.test')).not.toBe(
      hmacOf(key, 'helpdesk@chain.test'),
    );
  });

  it('seals the whole entry as documented: every string of its details, nested and in lists, as an HMAC', async () => {
    const [team] = (
      await Promise.all([
        createTeam(database.db, { name: 'Sealed', adminEmail: 'owner@sealed.test' }, systemClock),
      ])
    ).map((created) => created.team.id);
    if (!team) throw new Error('no team');
    const at = new Date('2026-11-20T10:00:00.000Z');
    await recordAudits(database.db, [
      {
        teamId: team,
        actor: { userId: 'user-1', email: 'helpdesk@sealed.test', ipAddress: null, userAgent: 'Firefox' },
        at,
        action: 'case.created',
        target: 'case-x',
        details: { methods: ['email', 'sms'], manager: { name: 'Mia', level: 2 }, live: true, none: null },
      },
    ]);
    expect(await sealAuditChains(database.db)).toBeGreaterThanOrEqual(1);
    const [row] = await chain(team);
    const key = await teamEvidenceKey(database.db, team);
    expect(row?.sealed).toEqual({
      v: 1,
      id: row?.id,
      team,
      at: at.toISOString(),
      actor: { user: 'user-1', email: hmacOf(key, 'helpdesk@sealed.test') },
      action: 'case.created',
      target: 'case-x',
      details: {
        methods: [hmacOf(key, 'email'), hmacOf(key, 'sms')],
        manager: { name: hmacOf(key, 'Mia'), level: 2 },
        live: true,
        none: null,
      },
      ip: null,
      agent: hmacOf(key, 'Firefox'),
    });
  });

  it('one sealing run seals every entry waiting, past one batch', async () => {
    const team = (
      await createTeam(database.db, { name: 'Batch', adminEmail: 'owner@batch.test' }, systemClock)
    ).team.id;
    // Written after the other teams' entries (which retention deletes in a test below).
    await write(team, 1_100, 1_000_000);
    const sealed = await sealAuditChains(database.db);
    expect(sealed).toBeGreaterThanOrEqual(1_100);
    const rows = await chain(team);
    expect(rows.filter((row) => row.hash === null)).toEqual([]);
    expect(rows.at(-1)?.chainSeq).toBe(rows.length);
  });

  it('verifies whole; redaction’s placeholders in a row keep it whole', async () => {
    expect((await verify(teamId)).broken).toBeNull();
    await database.db
      .update(auditLog)
      .set({ details: sql`jsonb_set(${auditLog.details}, '{subject_email}', '"[redacted]"')` })
      .where(and(eq(auditLog.teamId, teamId), eq(auditLog.target, 'case-5')));
    const report = await verify(teamId);
    expect(report.broken).toBeNull();
    expect(report.entries).toBe((await chain(teamId)).length);
  });

  it('names the first row edited in the database', async () => {
    const rows = await chain(teamId);
    const victim = rows[700];
    await database.db
      .update(auditLog)
      .set({ action: 'case.canceled' })
      .where(eq(auditLog.id, victim?.id ?? ''));
    const report = await verify(teamId);
    expect(report.broken).toEqual({
      entryId: victim?.id,
      seq: 701,
      reason: 'its row was changed after it was sealed (action)',
    });
    await database.db
      .update(auditLog)
      .set({ action: 'case.created' })
      .where(eq(auditLog.id, victim?.id ?? ''));
    expect((await verify(teamId)).broken).toBeNull();
  });

  it('names a row whose actor address, client address, agent or a details string was rewritten to another value', async () => {
    const rows = await chain(teamId);
    const victim = rows[800];
    if (!victim) throw new Error('no entry 801');
    // Each of these is sealed only as its HMAC, and redaction may put its placeholder in the row in
    // the value's place: any other value there is an edit all the same, and verification names the
    // entry and the field.
    const edits: [string, Partial<typeof auditLog.$inferInsert>, Partial<typeof auditLog.$inferInsert>][] = [
      ['actor.email', { actorEmail: 'someone-else@chain.test' }, { actorEmail: redactedEmail('p-1') }],
      ['ip', { ipAddress: '203.0.113.9' }, { ipAddress: ERASED }],
      ['agent', { userAgent: 'curl' }, { userAgent: ERASED }],
      [
        'details.subject_email',
        { details: { ...victim.details, subject_email: 'someone-else@chain.test' } },
        { details: { ...victim.details, subject_email: ERASED } },
      ],
    ];
    for (const [field, edited, redacted] of edits) {
      await database.db.update(auditLog).set(edited).where(eq(auditLog.id, victim.id));
      expect((await verify(teamId)).broken, field).toEqual({
        entryId: victim.id,
        seq: 801,
        reason: `its row was changed after it was sealed (${field})`,
      });
      // The same field as redaction leaves it keeps the chain whole: the sealed HMAC still stands
      // for the erased value.
      await database.db.update(auditLog).set(redacted).where(eq(auditLog.id, victim.id));
      expect((await verify(teamId)).broken, field).toBeNull();
      await database.db
        .update(auditLog)
        .set({
          actorEmail: victim.actorEmail,
          ipAddress: victim.ipAddress,
          userAgent: victim.userAgent,
          details: victim.details,
        })
        .where(eq(auditLog.id, victim.id));
    }
    expect((await verify(teamId)).broken).toBeNull();
  });

  it('names an entry whose row and sealed form were rewritten together but whose hash was left as it was', async () => {
    const rows = await chain(teamId);
    const victim = rows[600];
    if (!victim?.sealed) throw new Error('no sealed entry 601');
    // Row and sealed form agree, and the hash column (which the next entry names) is untouched:
    // only recomputing the entry's hash from its sealed form shows the rewrite.
    await database.db
      .update(auditLog)
      .set({ action: 'case.canceled', sealed: { ...victim.sealed, action: 'case.canceled' } })
      .where(eq(auditLog.id, victim.id));
    expect((await verify(teamId)).broken).toEqual({
      entryId: victim.id,
      seq: 601,
      reason: 'its hash does not match its sealed content and stated predecessor',
    });
    await database.db
      .update(auditLog)
      .set({ action: victim.action, sealed: victim.sealed })
      .where(eq(auditLog.id, victim.id));
    expect((await verify(teamId)).broken).toBeNull();
  });

  it('after retention deletes the chain’s start, the rest verifies from its checkpoint', async () => {
    const rows = await chain(teamId);
    // Entries 1–300 are past retention (written a second apart from the first one's time).
    const cutoff = new Date((rows[300]?.createdAt ?? new Date()).getTime());
    const deleted = await purgeAudit(database.db, cutoff, { kek: async () => kek, now: new Date() });
    // This team's first 300, and the other team's 3 (written at the same times).
    expect(deleted).toBe(303);
    const [head] = await database.db.select().from(auditChainHeads).where(eq(auditChainHeads.teamId, teamId));
    expect(head).toMatchObject({ checkpointSeq: 300, checkpointHash: rows[299]?.hash });
    expect(head?.checkpointJws?.split('.')).toHaveLength(3);
    // A compact JWS of its own type over {team, seq, hash}.
    const [header, payload] = (head?.checkpointJws ?? '').split('.');
    expect(JSON.parse(Buffer.from(header ?? '', 'base64url').toString())).toMatchObject({
      alg: 'EdDSA',
      typ: 'vouch-audit-checkpoint',
    });
    expect(JSON.parse(Buffer.from(payload ?? '', 'base64url').toString())).toMatchObject({
      team: teamId,
      seq: 300,
      hash: rows[299]?.hash,
    });
    const report = await verify(teamId);
    expect(report.broken).toBeNull();
    expect(report.entries).toBe(rows.length - 300);
    expect(await purgeAudit(database.db, cutoff, { kek: async () => kek, now: new Date() })).toBe(0);
    // A checkpoint that says another place than it was signed for breaks the chain there.
    await database.db
      .update(auditChainHeads)
      .set({ checkpointHash: rows[298]?.hash })
      .where(eq(auditChainHeads.teamId, teamId));
    expect((await verify(teamId)).broken).toEqual({
      entryId: null,
      seq: 300,
      reason:
        'the checkpoint where the remaining chain starts is not signed by a published key for this place and hash',
    });
    await database.db
      .update(auditChainHeads)
      .set({ checkpointHash: rows[299]?.hash })
      .where(eq(auditChainHeads.teamId, teamId));
    expect((await verify(teamId)).broken).toBeNull();
  });

  it('a checkpoint not signed for its place by a published key, as a checkpoint, breaks the chain', async () => {
    const [head] = await database.db.select().from(auditChainHeads).where(eq(auditChainHeads.teamId, teamId));
    const signed = head?.checkpointJws;
    if (!head || head.checkpointSeq === null || !signed) throw new Error('no checkpoint');
    const claims = { team: teamId, seq: head.checkpointSeq, hash: head.checkpointHash };
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const kid = signedBy(signed);
    const checkpointBroken = (seq: number) => ({
      entryId: null,
      seq,
      reason:
        'the checkpoint where the remaining chain starts is not signed by a published key for this place and hash',
    });
    const withJws = async (checkpointJws: string) =>
      database.db.update(auditChainHeads).set({ checkpointJws }).where(eq(auditChainHeads.teamId, teamId));

    // Each of these states exactly the head's place and hash: only checking who signed it, with
    // which algorithm and as what, tells them from the real one.
    const { privateKey } = await generateKeyPair('EdDSA');
    const forgeries: [string, string][] = [
      [
        // A key of the forger's own, naming the published key's id.
        'signed by a key not published',
        await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
          .setProtectedHeader({ alg: 'EdDSA', kid: kid ?? undefined, typ: CHECKPOINT_TYP })
          .sign(privateKey),
      ],
      ['unsigned (alg none)', `${encode({ alg: 'none', typ: CHECKPOINT_TYP })}.${encode(claims)}.`],
      [
        // The service's own key, but over something that is not a checkpoint.
        'signed by the published key as another type',
        await signClaims(database.db, kek, new Date(), 'vouch-claims', claims),
      ],
    ];
    for (const [what, forged] of forgeries) {
      await withJws(forged);
      expect((await verify(teamId)).broken, what).toEqual(checkpointBroken(head.checkpointSeq));
    }
    await withJws(signed);
    expect((await verify(teamId)).broken).toBeNull();

    // The checkpoint moved over the first remaining entry, which is deleted, its payload edited to
    // say so under the old signature: the deletion must not pass as retention's.
    const [first] = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.teamId, teamId), eq(auditLog.chainSeq, head.checkpointSeq + 1)));
    if (!first) throw new Error('no entry after the checkpoint');
    const [header, , signature] = signed.split('.');
    await database.db.delete(auditLog).where(eq(auditLog.id, first.id));
    await database.db
      .update(auditChainHeads)
      .set({
        checkpointSeq: first.chainSeq,
        checkpointHash: first.hash,
        checkpointJws: `${header}.${encode({ team: teamId, seq: first.chainSeq, hash: first.hash })}.${signature}`,
      })
      .where(eq(auditChainHeads.teamId, teamId));
    expect((await verify(teamId)).broken).toEqual(checkpointBroken(first.chainSeq ?? 0));
    await database.db.insert(auditLog).values(first);
    await database.db
      .update(auditChainHeads)
      .set({ checkpointSeq: head.checkpointSeq, checkpointHash: head.checkpointHash, checkpointJws: signed })
      .where(eq(auditChainHeads.teamId, teamId));
    expect((await verify(teamId)).broken).toBeNull();

    // Signed by a key since revoked (withdrawn from the key set): it no longer vouches for the
    // place, until the checkpoint is signed again with the current key.
    if (!kid) throw new Error('the checkpoint names no key');
    expect(await revokeSigningKey(database.db, kid, 'test', new Date())).not.toBeNull();
    expect((await verify(teamId)).broken).toEqual(checkpointBroken(head.checkpointSeq));
    expect(await signCheckpointsAgain(database.db, kid, { kek: async () => kek, now: new Date() })).toContain(
      teamId,
    );
    expect((await verify(teamId)).broken).toBeNull();
  });

  it('names an entry whose sealed content or hash was rewritten, and a removed one', async () => {
    const rows = await chain(teamId);
    const victim = rows[10];
    const place = victim?.chainSeq ?? 0;
    // Rewritten consistently with its own hash: the next entry no longer names it.
    const forged = { ...(victim?.sealed ?? {}), action: 'case.canceled' };
    await database.db
      .update(auditLog)
      .set({
        action: 'case.canceled',
        sealed: forged,
        hash: createHash('sha256')
          .update(rfc8785({ seq: place, prev: victim?.prevHash ?? null, entry: forged }))
          .digest('hex'),
      })
      .where(eq(auditLog.id, victim?.id ?? ''));
    expect((await verify(teamId)).broken).toEqual({
      entryId: rows[11]?.id,
      seq: place + 1,
      reason: `its stated predecessor hash is not entry ${place}'s hash`,
    });
    await database.db
      .update(auditLog)
      .set({ action: victim?.action, sealed: victim?.sealed, hash: victim?.hash })
      .where(eq(auditLog.id, victim?.id ?? ''));

    await database.db.delete(auditLog).where(eq(auditLog.id, rows[20]?.id ?? ''));
    expect((await verify(teamId)).broken).toMatchObject({
      entryId: rows[21]?.id,
      reason: `entry ${place + 10} is missing: the chain goes from ${place + 9} to ${place + 11}`,
    });

    const third = (
      await createTeam(database.db, { name: 'Third', adminEmail: 'owner@third.test' }, systemClock)
    ).team.id;
    await write(third, 3);
    await sealAuditChains(database.db);
    const other = await chain(third);
    await database.db.delete(auditLog).where(eq(auditLog.id, other.at(-1)?.id ?? ''));
    expect((await verify(third)).broken).toMatchObject({
      entryId: null,
      reason: `the chain ends at entry ${other.length - 1}, but its head says ${other.length}: entries were removed`,
    });
  });
});
