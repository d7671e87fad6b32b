import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { Queryable, Tx } from '@/db/client';
import { type NameMatchMode, type VerificationMethod, verificationTemplates } from '@/db/schema';
import type { Locale } from '@/server/i18n/supported-locales';
import type { DataScope } from '@/server/platform/data-scope';
import { AppError } from '@/server/platform/errors';
import { isUuid } from '@/server/platform/ids';
import { notFoundInScope } from '@/server/platform/not-found-in-scope';

export type TemplateRecord = typeof verificationTemplates.$inferSelect;

/**
 * What a template holds: its name, methods, the step settings it gives each case, its locale and
 * what its cases do when a document shows another name (name_match), and whether they offer a
 * passkey once closed (offer_passkey).
 */
export interface TemplateValues {
  name: string;
  methods: Partial<Record<VerificationMethod, boolean>>;
  settings: Partial<Record<VerificationMethod, Record<string, unknown>>>;
  locale: Locale | null;
  nameMatch: NameMatchMode;
  /** Whether its cases offer a passkey once closed, unless a case says. */
  offerPasskey: boolean;
}

/** How many templates a team may keep in each mode: enough for every flow, few enough to list on one page. */
export const TEMPLATE_LIMIT = 100;

/** The scope's conditions on the templates table: one team, one mode. */
function inScope(scope: DataScope) {
  return and(
    eq(verificationTemplates.teamId, scope.teamId),
    eq(verificationTemplates.livemode, scope.livemode),
  );
}

/** The scope's templates, by name. */
export function listTemplates(db: Queryable, scope: DataScope): Promise<TemplateRecord[]> {
  return db
    .select()
    .from(verificationTemplates)
    .where(inScope(scope))
    .orderBy(asc(verificationTemplates.name));
}

/**
 * The scope's template `id`, or 404: another team's and a malformed id look the same; the team's
 * other mode's template says so (notFoundInScope).
 */
export async function findTemplateOrFail(
  db: Queryable,
  scope: DataScope,
  id: string,
): Promise<TemplateRecord> {
  const valid = isUuid(id);
  const [row] = valid
    ? await db
        .select()
        .from(verificationTemplates)
        .where(and(inScope(scope), eq(verificationTemplates.id, id)))
    : [];
  if (!row) {
    throw await notFoundInScope(db, verificationTemplates, scope, valid ? id : null, {
      noun: 'template',
    });
  }
  return row;
}

export async function findTemplateByName(
  db: Queryable,
  scope: DataScope,
  name: string,
): Promise<TemplateRecord | null> {
  const [row] = await db
    .select()
    .from(verificationTemplates)
    .where(and(inScope(scope), eq(verificationTemplates.name, name)));
  return row ?? null;
}

async function refuseTakenName(db: Queryable, scope: DataScope, name: string, self?: string): Promise<void> {
  const taken = await findTemplateByName(db, scope, name);
  if (taken && taken.id !== self) {
    throw new AppError('VALIDATION_ERROR', `name: your team already has a template named "${name}"`);
  }
}

/**
 * Serialises changes to one team's templates of one mode until the transaction ends (an advisory
 * lock: no row is held, so cases keep being created meanwhile). Two creations of one name, or of
 * the last template the limit allows, then take turns instead of meeting at the unique index.
 */
export async function lockTeamTemplates(tx: Tx, scope: DataScope): Promise<void> {
  const key = `templates:${scope.teamId}:${scope.livemode ? 'live' : 'test'}`;
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`);
}

/** Adds a template; call it under lockTeamTemplates. */
export async function insertTemplate(
  db: Queryable,
  scope: DataScope,
  values: TemplateValues,
  now: Date,
): Promise<TemplateRecord> {
  const [{ total } = { total: 0 }] = await db
    .select({ total: count() })
    .from(verificationTemplates)
    .where(inScope(scope));
  if (total >= TEMPLATE_LIMIT) {
    throw new AppError(
      'VALIDATION_ERROR',
      `A team can keep at most ${TEMPLATE_LIMIT} templates in each mode: delete one first.`,
    );
  }
  await refuseTakenName(db, scope, values.name);
  const [row] = await db
    .insert(verificationTemplates)
    .values({ teamId: scope.teamId, livemode: scope.livemode, ...values, createdAt: now, updatedAt: now })
    .returning();
  if (!row) throw new Error('template insert returned nothing');
  return row;
}

/** Replaces what a template holds; call it under lockTeamTemplates. */
export async function replaceTemplate(
  db: Queryable,
  scope: DataScope,
  id: string,
  values: TemplateValues,
  now: Date,
): Promise<TemplateRecord> {
  await refuseTakenName(db, scope, values.name, id);
  const [row] = await db
    .update(verificationTemplates)
    .set({ ...values, updatedAt: now })
    .where(and(inScope(scope), eq(verificationTemplates.id, id)))
    .returning();
  if (!row) throw new AppError('NOT_FOUND', 'No template with this id.');
  return row;
}

export async function deleteTemplate(db: Queryable, scope: DataScope, id: string): Promise<TemplateRecord> {
  const [row] = await db
    .delete(verificationTemplates)
    .where(and(inScope(scope), eq(verificationTemplates.id, id)))
    .returning();
  if (!row) throw new AppError('NOT_FOUND', 'No template with this id.');
  return row;
}

/** The scope's templates by name, each read once per lookup (one request, one batch, one import). */
export function teamTemplates(
  db: Queryable,
  scope: DataScope,
): (name: string) => Promise<TemplateRecord | null> {
  const found = new Map<string, Promise<TemplateRecord | null>>();
  return (name) => {
    let template = found.get(name);
    if (!template) {
      template = findTemplateByName(db, scope, name);
      found.set(name, template);
    }
    return template;
  };
}
