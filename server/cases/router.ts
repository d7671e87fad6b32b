import { z } from 'zod';
import { pageUrl } from '@/server/api/page-url';
import { apiKeyProcedure, router } from '@/server/api/trpc/init';
import { parseIdempotencyKey, runIdempotent } from '@/server/idempotency/run-idempotent';
import { AppError } from '@/server/platform/errors';
import { looksLikePublicId } from '@/server/platform/ids';
import { findCaseForTeam } from './case-repository';
import { createCase, prepareCase } from './create-case';
import { listCases } from './list-cases';
import { simulateCase, simulateCaseInput } from './simulate-case';
import {
  type CaseWire,
  caseListOutput,
  caseOutput,
  createCaseInput,
  listCasesInput,
  toCaseWire,
} from './wire';

export const casesRouter = router({
  create: apiKeyProcedure
    // Before `.input()`: a bad Idempotency-Key is a 400 whatever the body holds.
    .use(({ ctx, next }) =>
      next({ ctx: { idempotencyKey: parseIdempotencyKey(ctx.requestHeaders.get('idempotency-key')) } }),
    )
    .meta({
      successStatus: 201,
      idempotent: true,
      errors: ['TRIAL_EXPIRED', 'INSUFFICIENT_ALLOWANCE'],
      openapi: {
        method: 'POST',
        path: '/cases/',
        tags: ['Cases'],
        summary: 'Create a verification case',
        description:
          'Opens a case for a subject and charges one unit per requested method (government_id adds selfie). Send an Idempotency-Key header to make retries safe.',
        successDescription: 'The created case (201).',
      },
    })
    .input(createCaseInput)
    .output(caseOutput)
    .mutation(async ({ ctx, input }) => {
      const prepared = await prepareCase(input);
      const result = await runIdempotent<CaseWire>(
        ctx.db,
        {
          ...ctx.scope,
          key: ctx.idempotencyKey,
          operation: 'cases.create',
          request: input,
          status: 201,
        },
        ctx.clock,
        async (tx) => {
          const record = await createCase(tx, ctx.scope, prepared, {
            clock: ctx.clock,
            caseTtlSeconds: ctx.env.CASE_TTL_SECONDS,
          });
          return toCaseWire(record, ctx.clock());
        },
      );
      if (result.replayed) ctx.responseHeaders.set('Idempotent-Replayed', 'true');
      ctx.responseHeaders.set('Location', `${ctx.env.BASE_URL}/v1/cases/${result.body.id}/`);
      return result.body;
    }),

  list: apiKeyProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/cases/',
        tags: ['Cases'],
        summary: 'List cases',
        description:
          '50 per page, newest first. Follow `next` and `previous` as given; filters are kept in them.',
      },
    })
    .input(listCasesInput)
    .output(caseListOutput)
    .query(async ({ ctx, input }) => {
      const now = ctx.clock();
      const page = await listCases(ctx.db, ctx.scope, input, now);
      return {
        next: pageUrl('/v1/cases/', input, page.nextCursor),
        previous: pageUrl('/v1/cases/', input, page.previousCursor),
        results: page.results.map((record) => toCaseWire(record, now)),
      };
    }),

  get: apiKeyProcedure
    .meta({
      openapi: { method: 'GET', path: '/cases/{id}/', tags: ['Cases'], summary: 'Get one case' },
    })
    .input(z.object({ id: z.string() }))
    .output(caseOutput)
    .query(async ({ ctx, input }) => {
      // A malformed id is simply not a case of this team: 404, like any unknown id.
      const id = z.uuid().safeParse(input.id);
      const record = id.success ? await findCaseForTeam(ctx.db, ctx.scope, id.data) : null;
      if (!record) {
        throw new AppError(
          'NOT_FOUND',
          looksLikePublicId(input.id)
            ? 'No case with this id. This looks like a public_id (the id in the subject’s verification link); the API names a case by its id, a UUID.'
            : 'No case with this id.',
        );
      }
      return toCaseWire(record, ctx.clock());
    }),

  simulate: apiKeyProcedure
    .meta({
      errors: ['CASE_NOT_OPEN', 'STEP_NOT_PENDING', 'TEST_MODE_ONLY'],
      openapi: {
        method: 'POST',
        path: '/cases/{id}/simulate/',
        tags: ['Cases'],
        summary: 'Simulate a step or the end of a test case',
        description:
          'Test mode only. Completes a step (`complete_step`), fails one (`fail_step`, optionally with a `failure_reason`) or expires the case (`expire`) through the same state machine as the verification pages, so the same events and webhooks follow. Answers the case as it now is.',
      },
    })
    .input(simulateCaseInput)
    .output(caseOutput)
    .mutation(async ({ ctx, input }) =>
      toCaseWire(await simulateCase(ctx.db, ctx.scope, input, ctx.clock), ctx.clock()),
    ),
});
