import type { Queryable } from '@/db/client';
import type { VerificationMethod } from '@/db/schema';
import { AppError } from '@/server/platform/errors';
import type { AnswerKeeper } from './custom-question/answer';
import type { CreationSubject } from './method-module';
import { type ListedModule, METHOD_MODULES } from './modules';

/**
 * What the methods that take input at creation add to a case's create body, and the step settings
 * they make of it (each module's `createInput`). A method's fields are accepted only when it is
 * requested, and required then.
 */
type TakingInput = Extract<ListedModule, { createInput: object }>;
type UnionToIntersection<U> = (U extends unknown ? (union: U) => void : never) extends (all: infer I) => void
  ? I
  : never;

/** The create body's fields the methods read, every method's together. */
type CreateFieldsInput = UnionToIntersection<Parameters<TakingInput['createInput']['settings']>[0]>;

const CREATION_INPUT = METHOD_MODULES.flatMap((module) =>
  module.createInput ? [[module.definition.key, module.createInput] as const] : [],
);

/** Every method's create fields, for the create body's schema. */
export const METHOD_CREATE_FIELDS = Object.assign(
  {},
  ...CREATION_INPUT.map(([, { fields }]) => fields),
) as UnionToIntersection<TakingInput['createInput']['fields']>;

/** Which create fields go with which method. */
export const CREATE_FIELDS_BY_METHOD = CREATION_INPUT.map(
  ([method, { fields }]) => [method as VerificationMethod, Object.keys(fields)] as const,
);

/**
 * What each method a create body (or a template's) can request is, for the OpenAPI document:
 * every module's own description of its step, with the create fields it takes, so a new method is
 * described by its module and never missing from a hand-written list.
 */
export function requestableMethodsDescription(): string {
  const fieldsOf = new Map<VerificationMethod, readonly string[]>(CREATE_FIELDS_BY_METHOD);
  return METHOD_MODULES.map(({ definition, output }) => {
    const fields = fieldsOf.get(definition.key);
    const send = fields ? ` Send ${fields.join(' and ')} with it.` : '';
    return `\`${definition.key}\`: ${output.description}${send}`;
  }).join(' ');
}

/**
 * The steps' settings a new case starts with, from its create body (slow work, such as hashing an
 * answer, happens here: before the case's transaction, never while the team's row is locked). A
 * custom answer is kept as `keepAnswer` says.
 */
export async function settingsAtCreation(
  input: CreateFieldsInput,
  keepAnswer: AnswerKeeper,
): Promise<Partial<Record<VerificationMethod, Record<string, unknown>>>> {
  const settings: Partial<Record<VerificationMethod, Record<string, unknown>>> = {};
  for (const [method, { settings: make }] of CREATION_INPUT) {
    const made = await make(input, keepAnswer);
    if (made) settings[method] = made;
  }
  return settings;
}

/** A method field the body gives wrong, as a validation issue says it. */
export interface MethodFieldIssue {
  field: string;
  message: string;
}

/**
 * What a body says wrong about the methods' fields: a field of a method it does not request; a
 * method's fields given in part; and, for a case (`everyCaseGivesThem`), a requested method's
 * field missing. A template may leave a requested method's fields out: each case gives them.
 */
export function methodFieldIssues(
  methods: Partial<Record<VerificationMethod, boolean>>,
  body: Record<string, unknown>,
  options: { everyCaseGivesThem: boolean; leftBy?: string },
): MethodFieldIssue[] {
  const issues: MethodFieldIssue[] = [];
  for (const [method, fields] of CREATE_FIELDS_BY_METHOD) {
    const given = fields.filter((field) => body[field] !== undefined && body[field] !== null);
    if (methods[method] !== true) {
      for (const field of given) issues.push({ field, message: `only accepted when ${method} is requested` });
      continue;
    }
    if (given.length === fields.length || (given.length === 0 && !options.everyCaseGivesThem)) continue;
    for (const field of fields.filter((f) => !given.includes(f))) {
      issues.push({
        field,
        message:
          given.length > 0
            ? `required with ${given.join(' and ')}`
            : options.leftBy
              ? `required when ${method} is requested (the template ${options.leftBy} leaves it to each case)`
              : `required when ${method} is requested`,
      });
    }
  }
  return issues;
}

/** The fields a template shows for the settings it keeps, every method's (null: not set). */
export function shownSettings(
  settings: Partial<Record<VerificationMethod, Record<string, unknown>>>,
): Record<string, string | null> {
  return Object.assign({}, ...CREATION_INPUT.map(([method, { shown }]) => shown(settings[method])));
}

/** Refuses a body with issues: one VALIDATION_ERROR naming each field, as the API's validation does. */
export function refuseFieldIssues(issues: readonly MethodFieldIssue[]): void {
  if (issues.length === 0) return;
  throw new AppError(
    'VALIDATION_ERROR',
    issues.map(({ field, message }) => `${field}: ${message}`).join('; '),
  );
}

/**
 * Refuses a case whose methods cannot serve its subject (each module's `refuseCreation`: a passkey
 * asked of a subject who holds none), with the first refusal, before the case's transaction.
 */
export async function refuseUnservedMethods(
  db: Queryable,
  subject: CreationSubject,
  methods: readonly VerificationMethod[],
): Promise<void> {
  for (const module of METHOD_MODULES) {
    const refuse = 'refuseCreation' in module ? module.refuseCreation : undefined;
    if (!refuse || !methods.includes(module.definition.key)) continue;
    const refusal = await refuse(db, subject);
    if (refusal) throw refusal;
  }
}
