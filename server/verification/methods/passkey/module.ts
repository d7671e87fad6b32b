import type { MethodModule } from '@/server/verification/methods/method-module';
import { deletePasskeysEnrolledBy } from './ceremonies';
import { passkeyMethod } from './definition';
import { passkeyOffer } from './enrollment';
import { passkeyEvidence } from './evidence';
import { passkeyClosedPageOffer } from './offer-section';
import { passkeyOutput } from './output';
import { passkeyPageSection } from './page-section';
import { idCheckBehindProof, refusePasskeyCreation, simulatePasskeyProof } from './step';

/**
 * The passkey: a returning subject proves a passkey an earlier closed case of the same team and
 * mode saved, and the step's evidence leads back to that case's ID check.
 */
export const passkeyModule = {
  definition: passkeyMethod,
  output: passkeyOutput,
  evidence: passkeyEvidence,
  pageSection: passkeyPageSection,
  createInput: null,
  linkMail: null,
  notices: {
    'passkey-verified': false,
    'passkey-wrong': true,
    'passkey-none': true,
    'passkey-too-many': true,
    'passkey-saved': false,
    'passkey-declined': false,
    'passkey-save-failed': true,
  },
  noticeValues: {},
  refuseCreation: refusePasskeyCreation,
  simulateCompletion: simulatePasskeyProof,
  documentCheck: async (db, record) => {
    const behind = await idCheckBehindProof(db, record);
    // RFC 8176: a hardware-bound key (hwk), unlocked by the person's verification (user).
    return behind ? { ...behind, amr: ['hwk', 'user'] } : null;
  },
  closedPageOffer: async (db, record) => passkeyClosedPageOffer(await passkeyOffer(db, record)),
  redact: async (tx, record) => {
    await deletePasskeysEnrolledBy(tx, record.id);
  },
} as const satisfies MethodModule;
