import canonicalize from 'canonicalize';
import { base64url, type FlattenedJWS, flattenedVerify, importJWK, type JWK } from 'jose';
import { chainHash } from '@/server/audit/chain-hash';
import {
  EVIDENCE_RECORD_TYPE,
  EVIDENCE_RECORD_VERSION,
  EVIDENCE_TYP,
  type EvidenceRecord,
} from './record-format';

/*
 * Verifies an evidence record with nothing but the published key set: the JWS, its key, the
 * payload's form, and each audit entry's hash against its content and stated predecessor. Needs no
 * database (the CLI's `evidence verify` and the docs' verifier run it offline).
 */

export type EvidenceCheck =
  | { ok: true; record: EvidenceRecord; kid: string }
  /** `part` names what failed: the file, the JWS, its protected header, the key, the signature, the payload, or one audit entry. */
  | { ok: false; part: string; reason: string };

function failed(part: string, reason: string): EvidenceCheck {
  return { ok: false, part, reason };
}

function decodedJson(segment: string): unknown {
  return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(segment)));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks the record's audit entries: each hashes to what it states, and neighbours in the chain link up. */
function auditBreak(record: EvidenceRecord): EvidenceCheck | null {
  const entries = record.audit?.entries;
  if (!Array.isArray(entries)) return failed('payload', 'it has no audit entries list');
  let previous: EvidenceRecord['audit']['entries'][number] | null = null;
  for (const item of entries) {
    const at = `audit entry ${item?.seq}`;
    if (!isObject(item) || typeof item.seq !== 'number' || !isObject(item.entry)) {
      return failed(at, 'it is not an entry with a place and content');
    }
    if (chainHash(item.seq, item.prev_hash, item.entry) !== item.hash) {
      return failed(at, 'its hash does not match its content and stated predecessor');
    }
    if (previous && item.seq === previous.seq + 1 && item.prev_hash !== previous.hash) {
      return failed(at, `its stated predecessor is not entry ${previous.seq}'s hash`);
    }
    if (previous && item.seq <= previous.seq) return failed(at, 'the entries are not in chain order');
    if (item.entry.target !== record.case.id || item.entry.team !== record.case.team_id) {
      return failed(at, 'it is not about this case and team');
    }
    previous = item;
  }
  return null;
}

/** A key its issuer revoked, as the key set's `revoked` member names it. */
export interface RevokedKeyNotice {
  kid: string;
  revoked_at: string;
  reason?: string | null;
}

/**
 * Verifies `text`, a record as served (flattened JWS JSON), against `keys` (a JWKS's `keys`); a
 * record signed with a key in `revoked` (the key set's `revoked`) fails saying it was revoked.
 */
export async function verifyEvidence(
  text: string,
  keys: JWK[],
  revoked: RevokedKeyNotice[] = [],
): Promise<EvidenceCheck> {
  let jws: unknown;
  try {
    jws = JSON.parse(text);
  } catch {
    return failed('file', 'it is not JSON');
  }
  if (
    !isObject(jws) ||
    typeof jws.payload !== 'string' ||
    typeof jws.protected !== 'string' ||
    typeof jws.signature !== 'string'
  ) {
    return failed('JWS', 'it is not a JWS in flattened JSON serialization (payload, protected, signature)');
  }
  let header: unknown;
  try {
    header = decodedJson(jws.protected);
  } catch {
    return failed('protected header', 'it is not base64url-encoded JSON');
  }
  if (
    !isObject(header) ||
    header.alg !== 'EdDSA' ||
    header.typ !== EVIDENCE_TYP ||
    typeof header.kid !== 'string'
  ) {
    return failed('protected header', `it does not say alg EdDSA, typ ${EVIDENCE_TYP} and a kid`);
  }
  const revocation = revoked.find((key) => key.kid === header.kid);
  if (revocation) {
    return failed(
      'key',
      `it was signed with key ${header.kid}, which its issuer revoked at ${revocation.revoked_at}${revocation.reason ? ` (${revocation.reason})` : ''}: it can no longer be trusted; ask the issuer for a new record`,
    );
  }
  const jwk = keys.find((key) => key.kid === header.kid);
  if (!jwk) {
    return failed(
      'key',
      `it was signed with key ${header.kid}, which the key set does not hold (not the issuer's, or retired too long ago)`,
    );
  }
  let payload: Uint8Array;
  try {
    ({ payload } = await flattenedVerify(jws as unknown as FlattenedJWS, await importJWK(jwk, 'EdDSA'), {
      algorithms: ['EdDSA'],
    }));
  } catch {
    return failed(
      'signature',
      `it does not verify with key ${header.kid}: the payload, the protected header or the signature was changed after signing`,
    );
  }
  let record: EvidenceRecord;
  const payloadText = new TextDecoder().decode(payload);
  try {
    record = JSON.parse(payloadText) as EvidenceRecord;
  } catch {
    return failed('payload', 'it is not JSON');
  }
  if (canonicalize(record) !== payloadText) return failed('payload', 'it is not RFC 8785 canonical JSON');
  if (
    !isObject(record) ||
    record.type !== EVIDENCE_RECORD_TYPE ||
    record.version !== EVIDENCE_RECORD_VERSION
  ) {
    return failed('payload', `it is not a ${EVIDENCE_RECORD_TYPE} of version ${EVIDENCE_RECORD_VERSION}`);
  }
  if (record.kid !== header.kid) {
    return failed('payload', `it names key ${record.kid} but was signed with ${header.kid}`);
  }
  return auditBreak(record) ?? { ok: true, record, kid: header.kid };
}

/** What a verified record proves, in words, for the CLI and the PDF. */
export function evidenceSummary(record: EvidenceRecord): string[] {
  const c = record.case;
  const lines = [
    `Issued by ${record.issuer} at ${record.issued_at}, signed with key ${record.kid}.`,
    `Case ${c.id} (${c.public_id}) of team ${c.team_id}, ${c.livemode ? 'live' : 'test'} mode.`,
    `Subject: ${c.subject_email}${c.subject_name ? ` (${c.subject_name})` : ''}.`,
    `Outcome: ${c.status}${c.failure_reason ? ` (${c.failure_reason})` : ''}; created ${c.created_at}${c.ended_at ? `, ended ${c.ended_at}` : ''}.`,
  ];
  if (record.provisional) lines.push('PROVISIONAL: the case was still open when the record was issued.');
  if (c.redacted_at)
    lines.push(`Personal data erased at ${c.redacted_at}: personal values appear as evidence-key HMACs.`);
  for (const step of record.steps) {
    const evidence = Object.entries(step.evidence)
      .filter(([, value]) => value !== null)
      .map(([name, value]) => `${name} ${value}`)
      .join(', ');
    lines.push(
      `Step ${step.method}: ${step.outcome}${step.decided_at ? ` at ${step.decided_at}` : ''}, ${step.attempts} failed attempt(s)${evidence ? `; ${evidence}` : ''}.`,
    );
  }
  lines.push(`Events: ${record.events.length}, each with the SHA-256 of its body as delivered.`);
  const { entries, pending, sealed_through } = record.audit;
  lines.push(
    `Audit entries: ${entries.length} sealed in the team's hash chain${sealed_through === null ? '' : ` (through place ${sealed_through})`}, each hash recomputed from its content and predecessor${pending.length > 0 ? `; ${pending.length} not sealed yet` : ''}.`,
  );
  return lines;
}
