import type { Db, Queryable, Tx } from '@/db/client';
import type { VerificationMethod } from '@/db/schema';
import { isStatementRefusal } from '@/db/statement-refusal';
import { type AuditActor, auditRows } from '@/server/audit/record-audit';
import {
  allowanceChargeRows,
  allowanceCovers,
  assertMayCreateCases,
  chargeRows,
  type LockedTeam,
  lockTeamForCharges,
  type MethodCharges,
  priceCasesInOrder,
} from '@/server/billing/charge-case-methods';
import type { BalanceRow, UsageChargeRow } from '@/server/billing/queries';
import { caseEventData } from '@/server/cases/case-event-data';
import type { CaseRecord } from '@/server/cases/case-record';
import { readTeamPresentation, toCaseRecord } from '@/server/cases/queries';
import { supportedLocale } from '@/server/i18n/locales';
import type { MessageLocale } from '@/server/i18n/translator';
import type { Clock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import type { AppError } from '@/server/platform/errors';
import { newPublicId, newRowId } from '@/server/platform/ids';
import type { JobProducer } from '@/server/platform/jobs/producers';
import type { PlannedDelivery } from '@/server/platform/outbox/delivery-state';
import { mailRows } from '@/server/platform/outbox/enqueue-mail';
import {
  countCreations,
  plannedEvents,
  queueAttempts,
  type RecordedEvent,
} from '@/server/platform/outbox/record-events';
import { presentationOf, type TeamPresentation } from '@/server/teams/presentation';
import { applyTemplate, namedTemplate, type TemplateLookup } from '@/server/templates/apply-template';
import { teamTemplates } from '@/server/templates/templates';
import { refuseUnservedMethods, settingsAtCreation } from '@/server/verification/methods/creation';
import type { AnswerKeeper } from '@/server/verification/methods/custom-question/answer';
import { expandRequestedMethods } from '@/server/verification/methods/registry';
import { issueVerificationLinks, verificationMails } from '@/server/verification/start-verification';
import { caseAudit } from './audit-entries';
import { forgetTeamForCreation, teamForCreation } from './team-for-creation-memo';
import type { CreateCaseInput } from './wire';
import { writeCasesStatement } from './write-cases-statement';

export interface CreateCaseDeps {
  clock: Clock;
  jobs: JobProducer;
  caseTtlSeconds: number;
  /** Where the subject's pages are served (VERIFY_URL_BASE): the mailed links point there. */
  pageBase: string;
  /** DEFAULT_LOCALE: the mails' language when neither the case nor the team names one. */
  defaultLocale: MessageLocale;
  /**
   * Who creates the cases, when each creation's `case.created` audit entry is written with the
   * cases, in the same round trip (the API's creations and batches); unset, the caller audits.
   */
  auditedAs?: AuditActor;
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
  const { team, charges } = await chargeCases(tx, scope, [prepared], now);
  const [charge] = charges;
  if (charge && 'refused' in charge) throw charge.refused;
  return writeCase(tx, scope, prepared, { charge: charge ?? null, team, now }, deps);
}

/** A case's charge as chargeCases decided it: null in test mode, which charges nothing. */
export type CaseCharge = { locked: LockedTeam; priced: MethodCharges } | null;

/**
 * The charges of several cases of one team, decided under one lock: live mode locks the team's
 * row for the rest of the transaction, checks the subscription (TRIAL_EXPIRED refuses them all)
 * and prices each case in order against what the ones before it spent (an unpaid one is refused
 * alone). Test mode takes no lock and charges nothing. Also how the team appears (its name, brand
 * and default language), which the mails carry.
 */
export async function chargeCases(
  tx: Tx,
  scope: DataScope,
  prepared: PreparedCase[],
  now: Date,
): Promise<{ team: TeamPresentation; charges: Array<CaseCharge | { refused: AppError }> }> {
  if (!scope.livemode) {
    return { team: await readTeamPresentation(tx, scope.teamId), charges: prepared.map(() => null) };
  }
  const locked = await lockTeamForCharges(tx, scope.teamId, now);
  assertMayCreateCases(locked.team, now);
  return {
    team: presentationOf(locked.team),
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
  decided: { charge: CaseCharge; team: TeamPresentation; now: Date },
  deps: CreateCaseDeps,
): Promise<CaseRecord> {
  const [record] = await writeCases(tx, scope, [{ prepared, charge: decided.charge }], decided, deps);
  if (!record) throw new Error('case insert returned nothing');
  return record;
}

/**
 * Several cases' writes, each exactly a single case's (writeCase is this with one), sent as one
 * statement (writeCasesStatement): a batch's charges (summed per method), its cases, their steps,
 * their `case.created` events with the deliveries, their mails and their audit entries. The first
 * attempts' jobs follow when an endpoint is subscribed. The records come back in the order given.
 */
export async function writeCases(
  tx: Tx,
  scope: DataScope,
  items: ReadonlyArray<{ prepared: PreparedCase; charge: CaseCharge }>,
  decided: { team: TeamPresentation; now: Date },
  deps: CreateCaseDeps,
): Promise<CaseRecord[]> {
  if (items.length === 0) return [];
  const charges = chargeRows(items.flatMap(({ charge }) => (charge ? [charge] : [])));
  const written = await sendCaseWrites(
    tx,
    scope,
    items.map(({ prepared }) => prepared),
    { ...decided, charges },
    deps,
  );
  await queueAttempts(tx, deps.jobs, written.activeDeliveries);
  countCreations(tx, written.recorded);
  return written.records;
}

/**
 * A single case created in as few round trips as its guarantees allow (the API's creation without
 * an Idempotency-Key): in one statement when the allowance covers it (createCasesAtOnce), else the
 * long way (createCase: the lock, the charge priced, then the writes), which decides and words it
 * exactly. `chargedInStatement` says which way it went.
 */
export async function createCaseAtOnce(
  db: Db,
  scope: DataScope,
  prepared: PreparedCase,
  deps: CreateCaseDeps,
): Promise<{ record: CaseRecord; chargedInStatement: boolean }> {
  const records = await createCasesAtOnce(db, scope, [prepared], deps);
  if (records) return { record: firstRecord(records), chargedInStatement: true };
  const record = await db.transaction((tx) => createCase(tx, scope, prepared, deps));
  return { record, chargedInStatement: false };
}

/**
 * Cases of one team (one, or a batch's valid items) created by one statement when the plan's
 * allowance covers them all. The team as each process remembers it for a few seconds
 * (teamForCreation: how it appears, its billing anchor, whether its allowance covers the cases
 * as far as can be seen without the lock); then one statement that takes the team's lock, charges
 * the cases from the allowance, checks under the lock that the allowance still covers them, and
 * writes everything a creation writes (writeCasesStatement's `chargeInStatement`). Outside any
 * transaction when no active endpoint awaits `case.created` (the statement is its own commit, and
 * holds the lock only while PostgreSQL runs it), else in a transaction with the deliveries' jobs.
 * What the statement cannot settle (the allowance spent meanwhile, the subscription over, the
 * plan, the brand or the endpoints changed) it refuses, writing nothing, and the team is read
 * afresh next time. Returns the records in the order given, or null when the cases must be
 * created the long way (not covered, or refused), which prices each and words its refusal.
 */
export async function createCasesAtOnce(
  db: Db,
  scope: DataScope,
  prepared: readonly PreparedCase[],
  deps: CreateCaseDeps,
): Promise<CaseRecord[] | null> {
  const now = deps.clock();
  const team = await teamForCreation(db, scope, now);
  const methodsOfEach = prepared.map((item) => item.methods);
  if (scope.livemode && !allowanceCovers(team, methodsOfEach.flat(), now)) return null;
  const charges = {
    usage: scope.livemode ? allowanceChargeRows(scope.teamId, team.billingAnchor, methodsOfEach, now) : [],
    balance: [],
  };
  const decided = {
    team: team.presentation,
    now,
    charges,
    billingAnchor: team.billingAnchor,
    brandSeen: team.brandSeen,
  };
  try {
    if (team.endpointsAwaiting.length === 0) {
      const written = await sendCaseWrites(db, scope, prepared, { ...decided, alone: true }, deps);
      countCreations(db, written.recorded);
      return written.records;
    }
    // The deliveries' jobs go first, for ids chosen here, and the statement, which takes the
    // team's lock, last: the lock is held for the statement and the commit, not also for the
    // round trip that would queue the jobs of the deliveries it returned.
    return await db.transaction(async (tx) => {
      const written = await sendCaseWrites(
        tx,
        scope,
        prepared,
        { ...decided, alone: true, jobsFirst: { endpoints: team.endpointsAwaiting, tx } },
        deps,
      );
      countCreations(tx, written.recorded);
      return written.records;
    });
  } catch (error) {
    if (!isStatementRefusal(error)) throw error;
    forgetTeamForCreation(scope);
    return null;
  }
}

function firstRecord(records: CaseRecord[]): CaseRecord {
  const [record] = records;
  if (!record) throw new Error('case insert returned nothing');
  return record;
}

/**
 * The one statement of a run of creations (writeCasesStatement), its rows planned here: charged as
 * `decided.charges` says, under the caller's lock, or (with `billingAnchor`) from the allowance by
 * the statement under the lock it takes; `alone` outside a transaction. Returns the records in the
 * order given, the deliveries whose jobs the caller queues, and the events for the count.
 */
async function sendCaseWrites(
  db: Queryable,
  scope: DataScope,
  items: readonly PreparedCase[],
  decided: {
    team: TeamPresentation;
    now: Date;
    charges: { usage: UsageChargeRow[]; balance: BalanceRow[] };
    billingAnchor?: Date;
    alone?: boolean;
    /** The brand the mails are rendered with, when it was read before the statement. */
    brandSeen?: string;
    /**
     * The active endpoints `case.created` goes to, as last read: a delivery to each is planned
     * with its id and its job queued in `tx` before the statement (which refuses itself, `alone`,
     * if it fans out to another).
     */
    jobsFirst?: { endpoints: readonly string[]; tx: Tx };
  },
  deps: CreateCaseDeps,
): Promise<{ records: CaseRecord[]; activeDeliveries: Array<{ id: string }>; recorded: RecordedEvent[] }> {
  const { teamId, livemode } = scope;
  const { team, now, charges } = decided;
  const { auditedAs } = deps;
  const planned = items.map((prepared) => ({
    prepared,
    id: newRowId(),
    publicId: newPublicId(),
    expiresAt: new Date(now.getTime() + deps.caseTtlSeconds * 1000),
    links: issueVerificationLinks(prepared.methods),
  }));
  const createdAt = now.toISOString();
  const events = plannedEvents(
    planned.map(({ prepared: { input }, id, publicId }) => ({
      scope,
      type: 'case.created' as const,
      data: caseEventData({
        id,
        publicId,
        subjectEmail: input.subject_email,
        status: 'open',
        createdAt: now,
      }),
      caseId: id,
      now,
    })),
  );
  // Every way of creating a case sends the subject's and the manager's mails with it.
  const mails = planned.flatMap(({ prepared: { input }, id, publicId, expiresAt, links }) =>
    verificationMails(
      {
        caseId: id,
        publicId,
        pageBase: deps.pageBase,
        defaultLocale: deps.defaultLocale,
        livemode,
        subjectEmail: input.subject_email,
        subjectName: input.subject_name ?? null,
        locale: input.locale ? supportedLocale(input.locale) : null,
        expiresAt,
        manager: input.manager_email ? { name: input.manager_name ?? '', email: input.manager_email } : null,
      },
      team,
      links,
    ),
  );
  const plannedDeliveries: PlannedDelivery[] = (decided.jobsFirst?.endpoints ?? []).flatMap((endpointId) =>
    events.fanOut.map((event) => ({ id: newRowId(), event_id: event.event_id, endpoint_id: endpointId })),
  );
  if (decided.jobsFirst) await queueAttempts(decided.jobsFirst.tx, deps.jobs, plannedDeliveries);
  const [written] = await writeCasesStatement(db).execute({
    teamId,
    chargeInStatement: livemode && decided.billingAnchor !== undefined,
    now: createdAt,
    billingAnchor: (decided.billingAnchor ?? now).toISOString(),
    alone: decided.alone ?? false,
    brandSeen: decided.brandSeen ?? null,
    usage: JSON.stringify(charges.usage),
    balance: JSON.stringify(charges.balance),
    cases: JSON.stringify(
      planned.map(({ prepared: { input, externalRef }, id, publicId, expiresAt }) => ({
        id,
        team_id: teamId,
        livemode,
        public_id: publicId,
        subject_email: input.subject_email,
        subject_name: input.subject_name ?? null,
        name_match: input.name_match ?? 'enforce',
        offer_passkey: input.offer_passkey ?? false,
        locale: input.locale ? supportedLocale(input.locale) : null,
        notes: input.notes,
        external_ref: externalRef ?? null,
        created_at: createdAt,
        expires_at: expiresAt.toISOString(),
      })),
    ),
    steps: JSON.stringify(
      planned.flatMap(({ prepared: { methods, settings }, id, links }) =>
        methods.map((method) => ({
          case_id: id,
          method,
          settings: { ...settings[method], ...links.settings[method] },
          updated_at: createdAt,
        })),
      ),
    ),
    events: JSON.stringify(events.events),
    fanOut: JSON.stringify(events.fanOut),
    deliveryIds: JSON.stringify(plannedDeliveries),
    mails: JSON.stringify(mailRows(mails)),
    // The creations' audit entries (deps.auditedAs), committed with them.
    audit: JSON.stringify(
      auditedAs
        ? auditRows(
            planned.map(({ id }) => ({
              teamId,
              actor: auditedAs,
              at: now,
              ...caseAudit('case.created')({ id, livemode }),
            })),
          )
        : [],
    ),
  });
  if (!written) throw new Error("the cases' writes returned nothing");
  const byId = new Map(written.cases.map((row) => [row.id, toCaseRecord(row)]));
  return {
    records: planned.map(({ id }) => {
      const record = byId.get(id);
      if (!record) throw new Error(`case ${id} was not inserted`);
      return record;
    }),
    activeDeliveries: written.active_deliveries,
    recorded: events.recorded,
  };
}

export interface PreparedCase {
  /** The body as the case takes it: with a template, its methods, locale and manager applied. */
  input: CreateCaseInput & Required<Pick<CreateCaseInput, 'verification_methods'>>;
  methods: VerificationMethod[];
  settings: Partial<Record<VerificationMethod, Record<string, unknown>>>;
  /** Who the case is about in the system that asked for it (an identity provider's login_hint). */
  externalRef?: string | null;
}

/**
 * What preparing a team's cases reads: its templates by name, and whether a case's methods can
 * serve its subject (a passkey asked of someone who holds none is refused before anything is
 * written).
 */
export interface CaseSources {
  templates: TemplateLookup;
  refuseUnserved: (subjectEmail: string, methods: readonly VerificationMethod[]) => Promise<void>;
}

/** The sources of one team's cases in one mode. */
export function teamCaseSources(db: Queryable, scope: DataScope): CaseSources {
  return {
    templates: teamTemplates(db, scope),
    refuseUnserved: (subjectEmail, methods) => refuseUnservedMethods(db, { ...scope, subjectEmail }, methods),
  };
}

/**
 * Work done before the transaction: the template the body names is read and applied, the methods
 * are checked against the subject (`sources`), and slow hashing runs here, never while the team
 * row is locked. `keepAnswer` keeps a custom answer (hashed through the fair queue:
 * withAnswerHashing).
 */
export async function prepareCase(
  input: CreateCaseInput,
  sources: CaseSources,
  keepAnswer: AnswerKeeper,
): Promise<PreparedCase> {
  if (input.template === undefined && input.verification_methods !== undefined) {
    const methods = expandRequestedMethods(input.verification_methods);
    await sources.refuseUnserved(input.subject_email, methods);
    return {
      input: { ...input, verification_methods: input.verification_methods },
      methods,
      settings: await settingsAtCreation(input, keepAnswer),
    };
  }
  const template = await namedTemplate(sources.templates, input.template ?? '');
  const applied = applyTemplate(template, input);
  const methods = expandRequestedMethods(applied.input.verification_methods);
  await sources.refuseUnserved(input.subject_email, methods);
  // The case's own fields replace the template's, method by method.
  const own = await settingsAtCreation(input, keepAnswer);
  return {
    input: applied.input,
    methods,
    settings: { ...applied.inherited, ...own },
  };
}
