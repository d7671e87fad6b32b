import type { Tx } from '@/db/client';
import { pipelined } from '@/db/pipeline';
import type { VerificationMethod } from '@/db/schema';
import {
  assertMayCreateCases,
  chargeStatements,
  type LockedTeam,
  lockTeamForCharges,
  type MethodCharges,
  priceCasesInOrder,
} from '@/server/billing/charge-case-methods';
import { caseEventData } from '@/server/cases/case-event-data';
import type { CaseRecord } from '@/server/cases/case-record';
import { insertCase, insertSteps, readTeamName } from '@/server/cases/queries';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import type { AppError } from '@/server/platform/errors';
import { newPublicId, newRowId } from '@/server/platform/ids';
import type { JobProducer } from '@/server/platform/jobs/producers';
import { recordEvent } from '@/server/platform/outbox/record-events';
import { settingsAtCreation } from '@/server/verification/methods/creation';
import { expandRequestedMethods } from '@/server/verification/methods/registry';
import { issueVerificationLinks, sendVerificationMails } from '@/server/verification/start-verification';
import type { CreateCaseInput } from './wire';

export interface CreateCaseDeps {
  clock: Clock;
  jobs: JobProducer;
  caseTtlSeconds: number;
  /** Where the subject's pages are served (VERIFY_URL_BASE): the mailed links point there. */
  pageBase: string;
}

/**
 * Opens a case: checks the subscription, charges one unit per method, inserts the case and its
 * steps, records `case.created` and queues the subject's and manager's mails, all in the caller's
 * transaction so that either everything happens or nothing does. A test-mode case (`scope`
 * not live) charges nothing, counts no usage and passes no billing gate: it takes no team lock.
 */
export async function createCase(
  tx: Tx,
  scope: DataScope,
  prepared: PreparedCase,
  deps: CreateCaseDeps,
): Promise<CaseRecord> {
  const now = deps.clock();
  const { teamName, charges } = await chargeCases(tx, scope, [prepared], now);
  const [charge] = charges;
  if (charge && 'refused' in charge) throw charge.refused;
  return writeCase(tx, scope, prepared, { charge: charge ?? null, teamName, now }, deps);
}

/** A case's charge as chargeCases decided it: null in test mode, which charges nothing. */
export type CaseCharge = { locked: LockedTeam; priced: MethodCharges } | null;

/**
 * The charges of several cases of one team, decided under one lock: live mode locks the team's
 * row for the rest of the transaction, checks the subscription (TRIAL_EXPIRED refuses them all)
 * and prices each case in order against what the ones before it spent (an unpaid one is refused
 * alone). Test mode takes no lock and charges nothing. Also the team's name, which the mails carry.
 */
export async function chargeCases(
  tx: Tx,
  scope: DataScope,
  prepared: PreparedCase[],
  now: Date,
): Promise<{ teamName: string; charges: Array<CaseCharge | { refused: AppError }> }> {
  if (!scope.livemode) {
    return { teamName: await readTeamName(tx, scope.teamId), charges: prepared.map(() => null) };
  }
  const locked = await lockTeamForCharges(tx, scope.teamId, now);
  assertMayCreateCases(locked.team, now);
  return {
    teamName: locked.team.name,
    charges: priceCasesInOrder(
      locked,
      prepared.map((item) => item.methods),
    ),
  };
}

/**
 * A case's writes once its charge is decided (chargeCases): the charge itself, the case and its
 * steps, `case.created` with its deliveries, and the mails, pipelined in one round trip.
 */
export async function writeCase(
  tx: Tx,
  scope: DataScope,
  prepared: PreparedCase,
  decided: { charge: CaseCharge; teamName: string; now: Date },
  deps: CreateCaseDeps,
): Promise<CaseRecord> {
  const { input, methods, settings } = prepared;
  const { teamId, livemode } = scope;
  const { charge, teamName, now } = decided;

  // Every id is chosen here so that all the writes go out together, in this order: the steps
  // follow the case they reference and the deliveries their event.
  const id = newRowId();
  const publicId = newPublicId();
  const expiresAt = new Date(now.getTime() + deps.caseTtlSeconds * 1000);
  const links = issueVerificationLinks(methods);
  const [, [row], steps] = await pipelined(
    () => (charge ? Promise.all(chargeStatements(tx, charge.locked, charge.priced)) : Promise.resolve([])),
    () =>
      insertCase(tx).execute({
        id,
        teamId,
        livemode,
        publicId,
        subjectEmail: input.subject_email,
        subjectName: input.subject_name ?? null,
        notes: input.notes,
        now,
        expiresAt,
      }),
    () =>
      insertSteps(methods.length)(tx).execute({
        caseId: id,
        now,
        ...Object.fromEntries(
          methods.flatMap((method, index) => [
            [`method${index}`, method],
            [`settings${index}`, { ...settings[method], ...links.settings[method] }],
          ]),
        ),
      }),
    () =>
      recordEvent(tx, deps.jobs, {
        scope,
        type: 'case.created',
        data: caseEventData({
          id,
          publicId,
          subjectEmail: input.subject_email,
          status: 'open',
          createdAt: now,
        }),
        caseId: id,
        now,
      }),
    // Every way of creating a case sends the subject's and the manager's mails with it.
    () =>
      sendVerificationMails(
        tx,
        {
          caseId: id,
          publicId,
          pageBase: deps.pageBase,
          livemode,
          subjectEmail: input.subject_email,
          subjectName: input.subject_name ?? null,
          expiresAt,
          manager: input.manager_email
            ? { name: input.manager_name ?? '', email: input.manager_email }
            : null,
        },
        teamName,
        links,
      ),
  );
  if (!row) throw new Error('case insert returned nothing');
  return { ...row, steps };
}

export interface PreparedCase {
  input: CreateCaseInput;
  methods: VerificationMethod[];
  settings: Partial<Record<VerificationMethod, Record<string, unknown>>>;
}

/** Work done before the transaction: slow hashing must not run while the team row is locked. */
export async function prepareCase(input: CreateCaseInput): Promise<PreparedCase> {
  return {
    input,
    methods: expandRequestedMethods(input.verification_methods),
    settings: await settingsAtCreation(input),
  };
}
