import type { z } from 'zod';
import type { Queryable, Tx } from '@/db/client';
import type { VerificationMethod } from '@/db/schema/values';
import type { CaseRecord, CaseStepRow } from '@/server/cases/case-record';
import type { AppError } from '@/server/platform/errors';
import type { JobProducer } from '@/server/platform/jobs/producers';
import type { TransitionResult } from '@/server/verification/case-state';
import type { AnswerKeeper } from './custom-question/answer';
import type { MethodDefinition } from './definition';
import type { MethodEvidence } from './evidence-reference';
import type { LinkMail } from './link-mail';
import type { MethodOutput } from './output';
import type { ClosedPageOffer, PageSection } from './page-section';

/**
 * What a method takes at creation: its fields of the create body (described for the OpenAPI
 * document), the step settings made of them (slow work, such as hashing an answer, happens here:
 * before the case's transaction), and what a template shows of the settings it keeps.
 */
export interface MethodCreateInput<Fields extends z.ZodRawShape = z.ZodRawShape, Input = never> {
  fields: Fields;
  /** The step's settings from the body's fields; undefined when they are not given. */
  settings: (input: Input, keepAnswer: AnswerKeeper) => Promise<Record<string, unknown> | undefined>;
  /** What a template shows of the settings it keeps (its fields, none secret; null: not set). */
  shown: (settings: Record<string, unknown> | undefined) => Record<string, string | null>;
}

/**
 * One verification method, whole: its folder's `module.ts` exports it and `modules.ts` lists the
 * modules, which the application and API layers iterate (a Case's schema and fields, creation,
 * the subject's page, link mails, evidence records, the page's notices). The state machine and
 * the console's browser code read only the light, data-only `definition` (registry.ts).
 */
export interface MethodModule {
  definition: MethodDefinition & { key: VerificationMethod };
  /** Its part of a Case's `verification_methods`. */
  output: MethodOutput;
  /** What an evidence record cites for its step (OUTCOME_ONLY: the outcome alone). */
  evidence: MethodEvidence;
  /** Its section of the subject's page; null when shown with another's (the selfie, with the ID). */
  pageSection: PageSection | null;
  /** What it takes at creation; null for a method that needs nothing beyond being asked for. */
  // biome-ignore lint/suspicious/noExplicitAny: each module's input is its own fields' shape
  createInput: MethodCreateInput<z.ZodRawShape, any> | null;
  /** The mail carrying its link (the definition's `mailsLinkTo` says to whom); null if none. */
  linkMail: LinkMail | null;
  /**
   * The notices its forms leave on the page (`?n=<code>`, each the catalogue's `notice.<code>`),
   * each saying whether it reports an error, and the values their messages quote.
   */
  notices: Readonly<Record<string, boolean>>;
  noticeValues: Readonly<Record<string, string | number>>;
  /**
   * What refuses a case that asks for it, given who the case is about (the passkey: a subject who
   * holds none), checked before the case's transaction; absent when nothing does.
   */
  refuseCreation?: (db: Queryable, subject: CreationSubject) => Promise<AppError | null>;
  /**
   * Test mode's `complete_step`, when completing the step records more than its state (the
   * passkey: which one stood in); absent, the step is completed as the pages complete it.
   */
  simulateCompletion?: (
    tx: Tx,
    jobs: JobProducer,
    record: CaseRecord,
    now: Date,
  ) => Promise<TransitionResult>;
  /**
   * The document check its passed step stands on, which an identity provider's ID token asserts:
   * the government ID's own, a passkey's the one it leads back to. Absent for a method that checks
   * no document; an identity provider's flow runs only templates with such a method.
   */
  documentCheck?: (db: Queryable, record: CaseRecord) => Promise<DocumentCheck | null>;
  /**
   * What the subject's page offers once the case has closed (the passkey: saving one for next
   * time), read as the case stands; null when it offers nothing now. Asked of every method, not
   * only those the case requested: the offer is the case's (`offer_passkey`).
   */
  closedPageOffer?: (db: Queryable, record: CaseRecord) => Promise<ClosedPageOffer | null>;
  /**
   * What a redaction erases that the method keeps beyond the case's own rows (the passkey: those
   * the case saved, so no later case verifies the person by them), in the redaction's
   * transaction. Asked of every method.
   */
  redact?: (tx: Tx, record: CaseRecord) => Promise<void>;
}

/** A passed document check, as an ID token asserts it. */
export interface DocumentCheck {
  /** The case whose ID check it was, and that check's step. */
  idCase: CaseRecord;
  idStep: CaseStepRow;
  /** How the person authenticated just now besides (RFC 8176 `amr`; none for the check itself). */
  amr: readonly string[];
}

/** Who a case being created is about, in which team and mode. */
export interface CreationSubject {
  teamId: string;
  livemode: boolean;
  subjectEmail: string;
}
