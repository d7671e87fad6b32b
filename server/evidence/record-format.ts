/*
 * The evidence record's format: its types and names, with no dependency, so that the offline
 * verifier (verify-evidence.ts) reads it without the service's database code.
 */

/** The protected header's `typ` of an evidence record. */
export const EVIDENCE_TYP = 'vouch-evidence+json';

/** The media type a record is served as (a JWS in flattened JSON serialization, RFC 7515 §9.2.2). */
export const EVIDENCE_MEDIA_TYPE = 'application/jose+json';

/** What a record's `type` says it is, and its version. */
export const EVIDENCE_RECORD_TYPE = 'vouch.evidence_record';
export const EVIDENCE_RECORD_VERSION = 1;

/**
 * The audit action of a record's download. Left out of every record: a download is no part of the
 * case's history, and two records of an ended case must differ only in `issued_at` and `kid`.
 */
export const EVIDENCE_DOWNLOADED = 'case.evidence_downloaded';

export interface EvidenceStep {
  method: string;
  /** `pending` on an ended case: the step was never completed. */
  outcome: 'verified' | 'failed' | 'pending';
  decided_at: string | null;
  /** Wrong guesses spent (codes, answers). */
  attempts: number;
  evidence: Record<string, string | null>;
}

export interface EvidenceAuditEntry {
  seq: number;
  prev_hash: string | null;
  hash: string;
  /** The entry as the chain sealed it (personal values as evidence-key HMACs). */
  entry: Record<string, unknown>;
}

export interface EvidenceRecord {
  type: typeof EVIDENCE_RECORD_TYPE;
  version: typeof EVIDENCE_RECORD_VERSION;
  issuer: string;
  issued_at: string;
  kid: string;
  /** True while the case is open: its outcome may still change. */
  provisional: boolean;
  case: {
    id: string;
    public_id: string;
    team_id: string;
    livemode: boolean;
    status: string;
    failure_reason: string | null;
    created_at: string;
    ended_at: string | null;
    redacted_at: string | null;
    /** The methods the case asked for, in the API's order. */
    methods: string[];
    subject_email: string;
    /** The subject's name as given or read from their document, when known. */
    subject_name: string | null;
    /** Who the case is about in the system that opened it (an identity provider's login_hint). */
    external_ref: string | null;
    /** The identity provider's client whose flow opened the case, if one did. */
    identity_provider_client: string | null;
  };
  steps: EvidenceStep[];
  /** Each event about the case, with SHA-256 (hex) of its body as delivered (null when not known). */
  events: Array<{ id: string; type: string; created_at: string; body_sha256: string | null }>;
  audit: {
    /**
     * The place in the team's chain through which this record's entries are sealed: the last
     * entry's, or, while some are still to be sealed, where the chain stands (those follow it).
     */
    sealed_through: number | null;
    entries: EvidenceAuditEntry[];
    /** Entries written but not sealed yet (the sealing job runs a few seconds behind). */
    pending: Array<{ id: string; action: string; at: string }>;
  };
}

/** What redaction keeps of the record's personal values (see redacted-evidence.ts). */
export type RedactedEvidence = {
  subject_email: string;
  subject_name: string | null;
  external_ref?: string | null;
  steps: Record<string, Record<string, string | null>>;
};

/** A record as served: a JWS in flattened JSON serialization, every member base64url. */
export interface SignedEvidence {
  payload: string;
  protected: string;
  signature: string;
}

/**
 * How an evidence PDF names the case it describes, besides its pages: the attached record's file
 * name, and its title and subject. `evidence verify` checks a PDF's against the record attached.
 * `pdf` is the PDF's own file name as the console downloads it (and as the PDF's command names it).
 */
export const evidencePdfNames = (record: Pick<EvidenceRecord, 'case'>) => ({
  pdf: `evidence-${record.case.public_id}.pdf`,
  attachment: `evidence-${record.case.public_id}.json`,
  title: `Evidence record — case ${record.case.public_id}`,
  subject: `Signed evidence record of case ${record.case.id}`,
});
