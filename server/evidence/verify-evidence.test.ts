import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { type CryptoKey, exportJWK, FlattenedSign, generateKeyPair, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { rfc8785 } from '@/test/support/rfc8785';
import type { EvidenceRecord } from './record-format';
import { evidenceSummary, verifyEvidence } from './verify-evidence';

/**
 * The offline verifier of evidence records, on records signed here with a key of the test's own:
 * what verifies, and each way a record can be wrong, named by the part that failed and why.
 */
let privateKey: CryptoKey;
let jwk: JWK;
const KID = 'test-key-1';

beforeAll(async () => {
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  privateKey = pair.privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: KID, alg: 'EdDSA', use: 'sig' };
});

const hash = (seq: number, prev: string | null, entry: Record<string, unknown>) =>
  createHash('sha256').update(rfc8785({ seq, prev, entry })).digest('hex');

function record(overrides: Partial<EvidenceRecord> = {}): EvidenceRecord {
  const entry1 = { action: 'case.created', target: 'case-1', team: 'team-1' };
  const entry2 = { action: 'case.closed', target: 'case-1', team: 'team-1' };
  const first = hash(7, 'ab'.repeat(32), entry1);
  return {
    type: 'vouch.evidence_record',
    version: 1,
    issuer: 'https://vouch.test',
    issued_at: '2026-11-28T12:00:00.000Z',
    kid: KID,
    provisional: false,
    case: {
      id: 'case-1',
      public_id: 'pub1',
      team_id: 'team-1',
      livemode: true,
      status: 'closed',
      failure_reason: null,
      created_at: '2026-11-28T11:00:00.000Z',
      ended_at: '2026-11-28T11:30:00.000Z',
      redacted_at: null,
      methods: ['email', 'sms'],
      subject_email: 'ada@acme.test',
      subject_name: 'Ada Lovelace',
      external_ref: null,
      identity_provider_client: null,
    },
    steps: [
      {
        method: 'email',
        outcome: 'verified',
        decided_at: '2026-11-28T11:10:00.000Z',
        attempts: 0,
        evidence: { confirmed_email: 'ada@acme.test' },
      },
      {
        method: 'sms',
        outcome: 'verified',
        decided_at: null,
        attempts: 2,
        evidence: { phone_last4: '3456', vendor: null },
      },
    ],
    events: [
      { id: 'evt_1', type: 'case.created', created_at: '2026-11-28T11:00:00.000Z', body_sha256: 'ff' },
    ],
    audit: {
      sealed_through: 8,
      entries: [
        { seq: 7, prev_hash: 'ab'.repeat(32), hash: first, entry: entry1 },
        { seq: 8, prev_hash: first, hash: hash(8, first, entry2), entry: entry2 },
      ],
      pending: [],
    },
    ...overrides,
  };
}

async function signed(
  payload: unknown,
  header: Record<string, unknown> = { alg: 'EdDSA', typ: 'vouch-evidence+json', kid: KID },
  text = canonicalize(payload) ?? '',
): Promise<string> {
  const jws = await new FlattenedSign(new TextEncoder().encode(text))
    .setProtectedHeader(header as { alg: string })
    .sign(privateKey);
  return JSON.stringify(jws);
}

describe('verifyEvidence', () => {
  it('verifies a record signed by a key of the set, with its audit entries linked', async () => {
    const check = await verifyEvidence(await signed(record()), [jwk]);
    expect(check).toEqual({ ok: true, record: record(), kid: KID });
  });

  it('names the part that fails: file, JWS, header, key, signature, payload', async () => {
    const good = JSON.parse(await signed(record())) as Record<string, string>;
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const cases: Array<[string, string, string]> = [
      ['{', 'file', 'it is not JSON'],
      ['[]', 'JWS', 'it is not a JWS in flattened JSON serialization (payload, protected, signature)'],
      [
        JSON.stringify({ ...good, signature: 3 }),
        'JWS',
        'it is not a JWS in flattened JSON serialization (payload, protected, signature)',
      ],
      [
        JSON.stringify({ payload: good.payload, signature: good.signature }),
        'JWS',
        'it is not a JWS in flattened JSON serialization (payload, protected, signature)',
      ],
      [JSON.stringify({ ...good, protected: '%%%' }), 'protected header', 'it is not base64url-encoded JSON'],
      [
        // Not UTF-8: read strictly, not with replacement characters that could then match.
        JSON.stringify({
          ...good,
          protected: Buffer.concat([
            Buffer.from('{"alg":"EdDSA","typ":"vouch-evidence+json","kid":"'),
            Buffer.from([0xff]),
            Buffer.from('"}'),
          ]).toString('base64url'),
        }),
        'protected header',
        'it is not base64url-encoded JSON',
      ],
      [
        JSON.stringify({ ...good, protected: b64(['EdDSA']) }),
        'protected header',
        'it does not say alg EdDSA, typ vouch-evidence+json and a kid',
      ],
      [
        JSON.stringify({ ...good, payload: 7 }),
        'JWS',
        'it is not a JWS in flattened JSON serialization (payload, protected, signature)',
      ],
      [
        JSON.stringify({ ...good, protected: b64({ alg: 'ES256', typ: 'vouch-evidence+json', kid: KID }) }),
        'protected header',
        'it does not say alg EdDSA, typ vouch-evidence+json and a kid',
      ],
      [
        JSON.stringify({ ...good, protected: b64({ alg: 'EdDSA', typ: 'JWT', kid: KID }) }),
        'protected header',
        'it does not say alg EdDSA, typ vouch-evidence+json and a kid',
      ],
      [
        JSON.stringify({ ...good, protected: b64({ alg: 'EdDSA', typ: 'vouch-evidence+json' }) }),
        'protected header',
        'it does not say alg EdDSA, typ vouch-evidence+json and a kid',
      ],
      [
        JSON.stringify({
          ...good,
          protected: b64({ alg: 'EdDSA', typ: 'vouch-evidence+json', kid: 'other' }),
        }),
        'key',
        "it was signed with key other, which the key set does not hold (not the issuer's, or retired too long ago)",
      ],
      [
        JSON.stringify({ ...good, payload: b64({ ...record(), issuer: 'https://evil.test' }) }),
        'signature',
        `it does not verify with key ${KID}: the payload, the protected header or the signature was changed after signing`,
      ],
    ];
    for (const [text, part, reason] of cases) {
      expect(await verifyEvidence(text, [jwk]), `${part}: ${text.slice(0, 60)}`).toEqual({
        ok: false,
        part,
        reason,
      });
    }
  });

  it('names a revoked key, with when and why, before looking for it', async () => {
    expect(
      await verifyEvidence(
        await signed(record()),
        [jwk],
        [{ kid: KID, revoked_at: '2026-11-29T00:00:00.000Z', reason: 'key compromised' }],
      ),
    ).toEqual({
      ok: false,
      part: 'key',
      reason: `it was signed with key ${KID}, which its issuer revoked at 2026-11-29T00:00:00.000Z (key compromised): it can no longer be trusted; ask the issuer for a new record`,
    });
    expect(
      await verifyEvidence(
        await signed(record()),
        [jwk],
        [{ kid: KID, revoked_at: '2026-11-29T00:00:00.000Z' }],
      ),
    ).toMatchObject({
      reason: expect.stringMatching(/revoked at 2026-11-29T00:00:00.000Z: it can no longer/),
    });
    // Another key's revocation does not touch this record.
    expect(
      await verifyEvidence(
        await signed(record()),
        [jwk],
        [{ kid: 'other', revoked_at: '2026-11-29T00:00:00.000Z' }],
      ),
    ).toMatchObject({ ok: true });
  });

  it('refuses a payload that is not canonical, not a record of this version, or names another key', async () => {
    const expectPayload = async (text: string, reason: string) =>
      expect(await verifyEvidence(text, [jwk])).toEqual({ ok: false, part: 'payload', reason });
    await expectPayload(await signed(null, undefined, 'not json'), 'it is not JSON');
    await expectPayload(
      await signed(record(), undefined, JSON.stringify(record(), null, 2)),
      'it is not RFC 8785 canonical JSON',
    );
    await expectPayload(
      await signed({ ...record(), type: 'other' }),
      'it is not a vouch.evidence_record of version 1',
    );
    await expectPayload(
      await signed({ ...record(), version: 2 }),
      'it is not a vouch.evidence_record of version 1',
    );
    await expectPayload(await signed([1]), 'it is not a vouch.evidence_record of version 1');
    await expectPayload(
      await signed({ ...record(), kid: 'another' }),
      `it names key another but was signed with ${KID}`,
    );
  });

  it('checks each audit entry: its hash, its predecessor, the chain’s order, and that it is about this case', async () => {
    const base = record();
    const [e1, e2] = base.audit.entries;
    if (!e1 || !e2) throw new Error('no entries');
    const withEntries = (entries: unknown) => ({ ...base, audit: { ...base.audit, entries } });
    const fail = async (payload: unknown, part: string, reason: string) =>
      expect(await verifyEvidence(await signed(payload), [jwk])).toEqual({ ok: false, part, reason });
    await fail(
      { ...base, audit: { ...base.audit, entries: 'x' } },
      'payload',
      'it has no audit entries list',
    );
    await fail(
      withEntries([{ seq: 'x', entry: {} }]),
      'audit entry x',
      'it is not an entry with a place and content',
    );
    await fail(
      withEntries([{ seq: 1, entry: 'x' }]),
      'audit entry 1',
      'it is not an entry with a place and content',
    );
    await fail(withEntries([3]), 'audit entry undefined', 'it is not an entry with a place and content');
    await fail(withEntries([null]), 'audit entry undefined', 'it is not an entry with a place and content');
    await fail(
      withEntries([{ seq: 1, entry: ['case.created'] }]),
      'audit entry 1',
      'it is not an entry with a place and content',
    );
    await fail({ ...base, audit: null }, 'payload', 'it has no audit entries list');
    await fail(
      withEntries([{ ...e1, entry: { ...e1.entry, action: 'case.canceled' } }, e2]),
      'audit entry 7',
      'its hash does not match its content and stated predecessor',
    );
    const forged = { ...e2, prev_hash: 'cd'.repeat(32), hash: hash(8, 'cd'.repeat(32), e2.entry) };
    await fail(withEntries([e1, forged]), 'audit entry 8', "its stated predecessor is not entry 7's hash");
    await fail(withEntries([e2, e1]), 'audit entry 7', 'the entries are not in chain order');
    await fail(withEntries([e1, e1]), 'audit entry 7', 'the entries are not in chain order');
    const elsewhere = { action: 'case.created', target: 'case-2', team: 'team-1' };
    await fail(
      withEntries([{ seq: 9, prev_hash: null, hash: hash(9, null, elsewhere), entry: elsewhere }]),
      'audit entry 9',
      'it is not about this case and team',
    );
    const otherTeam = { action: 'case.created', target: 'case-1', team: 'team-2' };
    await fail(
      withEntries([{ seq: 9, prev_hash: null, hash: hash(9, null, otherTeam), entry: otherTeam }]),
      'audit entry 9',
      'it is not about this case and team',
    );
    // Entries need not be consecutive: a gap (another case's entries between) is fine.
    const later = {
      seq: 12,
      prev_hash: 'ee'.repeat(32),
      hash: hash(12, 'ee'.repeat(32), e2.entry),
      entry: e2.entry,
    };
    expect(await verifyEvidence(await signed(withEntries([e1, later])), [jwk])).toMatchObject({ ok: true });
  });
});

describe('evidenceSummary', () => {
  it('says in words what the record proves', () => {
    expect(evidenceSummary(record())).toEqual([
      `Issued by https://vouch.test at 2026-11-28T12:00:00.000Z, signed with key ${KID}.`,
      'Case case-1 (pub1) of team team-1, live mode.',
      'Subject: ada@acme.test (Ada Lovelace).',
      'Outcome: closed; created 2026-11-28T11:00:00.000Z, ended 2026-11-28T11:30:00.000Z.',
      'Step email: verified at 2026-11-28T11:10:00.000Z, 0 failed attempt(s); confirmed_email ada@acme.test.',
      'Step sms: verified, 2 failed attempt(s); phone_last4 3456.',
      'Events: 1, each with the SHA-256 of its body as delivered.',
      "Audit entries: 2 sealed in the team's hash chain (through place 8), each hash recomputed from its content and predecessor.",
    ]);
    const open = record({
      provisional: true,
      case: {
        ...record().case,
        livemode: false,
        status: 'failed',
        failure_reason: 'name_mismatch',
        ended_at: null,
        subject_name: null,
        redacted_at: '2026-11-30T00:00:00.000Z',
      },
      steps: [
        { method: 'manager', outcome: 'pending', decided_at: null, attempts: 0, evidence: {} },
        {
          method: 'government_id',
          outcome: 'failed',
          decided_at: null,
          attempts: 1,
          evidence: { vendor: 'simulated', vendor_report_id: 'vr_1', document_country: null },
        },
      ],
      audit: { sealed_through: null, entries: [], pending: [{ id: 'a', action: 'case.created', at: 'x' }] },
    });
    expect(evidenceSummary(open)).toEqual([
      `Issued by https://vouch.test at 2026-11-28T12:00:00.000Z, signed with key ${KID}.`,
      'Case case-1 (pub1) of team team-1, test mode.',
      'Subject: ada@acme.test.',
      'Outcome: failed (name_mismatch); created 2026-11-28T11:00:00.000Z.',
      'PROVISIONAL: the case was still open when the record was issued.',
      'Personal data erased at 2026-11-30T00:00:00.000Z: personal values appear as evidence-key HMACs.',
      'Step manager: pending, 0 failed attempt(s).',
      'Step government_id: failed, 1 failed attempt(s); vendor simulated, vendor_report_id vr_1.',
      'Events: 1, each with the SHA-256 of its body as delivered.',
      "Audit entries: 0 sealed in the team's hash chain, each hash recomputed from its content and predecessor; 1 not sealed yet.",
    ]);
  });
});
