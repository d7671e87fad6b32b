import type { TeamActionContext } from '@/server/application/team-action-context';
import { recordAudit } from '@/server/audit/record-audit';
import { findTeamCaseOrFail } from '@/server/cases/case-repository';
import { evidenceFileName, renderEvidencePdf } from '@/server/evidence/evidence-pdf';
import {
  EVIDENCE_DOWNLOADED,
  EVIDENCE_MEDIA_TYPE,
  type EvidenceRecord,
  evidencePdfNames,
  type SignedEvidence,
} from '@/server/evidence/record-format';
import { issueEvidenceRecord } from '@/server/evidence/sign-evidence';
import type { DataScope } from '@/server/platform/data-scope';
import { readPresentation } from '@/server/teams/branding';

/** Who asks for a case's evidence record, and what signs it. */
export interface EvidenceContext extends TeamActionContext {
  scope: DataScope;
  /** The records' issuer: the service's BASE_URL. */
  issuer: string;
  /** The key the signing keys are encrypted under (server/signing/signing-secret.ts). */
  kek: () => Promise<Uint8Array>;
}

export type EvidenceFormat = 'json' | 'pdf';

export interface EvidenceDownload {
  record: EvidenceRecord;
  jws: SignedEvidence;
  /** The signed record, as served: a JWS in flattened JSON serialization. */
  signed: string;
  fileName: string;
  mediaType: string;
  /** The file: the signed record itself (json), or its PDF rendering with the record attached. */
  body: Uint8Array;
}

/**
 * A case's evidence record, signed now, for the team and mode that own the case (404 otherwise, as
 * every case read): as the signed JSON or as a PDF. Every download is audited (who, which format,
 * which key) before the file is handed over.
 */
export async function downloadEvidence(
  ctx: EvidenceContext,
  caseId: string,
  format: EvidenceFormat,
): Promise<EvidenceDownload> {
  const found = await findTeamCaseOrFail(ctx.db, ctx.scope, caseId);
  const now = ctx.clock();
  const { record, jws } = await issueEvidenceRecord(ctx.db, {
    record: found,
    issuer: ctx.issuer,
    kek: await ctx.kek(),
    now,
  });
  const signed = JSON.stringify(jws);
  const fileName = evidenceFileName(record);
  const download: EvidenceDownload =
    format === 'pdf'
      ? {
          record,
          jws,
          signed,
          fileName: evidencePdfNames(record).pdf,
          mediaType: 'application/pdf',
          body: await renderEvidencePdf({
            record,
            signed,
            teamName: (await readPresentation(ctx.db, found.teamId)).name,
          }),
        }
      : {
          record,
          jws,
          signed,
          fileName,
          mediaType: EVIDENCE_MEDIA_TYPE,
          body: new TextEncoder().encode(signed),
        };
  await recordAudit(ctx.db, {
    teamId: ctx.teamId,
    actor: ctx.actor,
    at: now,
    action: EVIDENCE_DOWNLOADED,
    target: found.id,
    details: { livemode: found.livemode, format, kid: record.kid },
  });
  return download;
}
