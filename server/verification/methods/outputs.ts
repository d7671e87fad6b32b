import { z } from 'zod';
import type { VerificationMethod } from '@/db/schema';
import { type ListedModule, METHOD_MODULES, MODULE_BY_KEY } from './modules';
import type { MethodOutput } from './output';

/** Each method's part of a Case, as its module declares it (precisely typed, for the Case's schema). */
type Outputs = { [M in ListedModule as M['definition']['key']]: M['output'] };

const methodState = {
  requested: z.boolean().meta({ description: 'Whether the case asked for this step.', examples: [true] }),
  verified: z.boolean().meta({ description: 'Whether the subject has passed this step.', examples: [false] }),
};

function nulls(output: MethodOutput): Record<string, null> {
  return Object.fromEntries(Object.keys(output.fields).map((field) => [field, null]));
}

/** The example case's methods: it asked for the first two and passed the first. */
export const EXAMPLE_VERIFICATION_METHODS = Object.fromEntries(
  METHOD_MODULES.map(({ definition, output }, index) => [
    definition.key,
    { requested: index < 2, verified: index === 0, ...nulls(output) },
  ]),
);

/** The schema of a Case's `verification_methods`: every method, in the registry's order. */
export const verificationMethodsOutput = z
  .object(
    Object.fromEntries(
      METHOD_MODULES.map(
        ({ definition, output }: { definition: { key: VerificationMethod }; output: MethodOutput }) => {
          return [
            definition.key,
            z.object({ ...methodState, ...output.fields }).meta({
              description: output.description,
              examples: [{ requested: true, verified: false, ...output.example }],
            }),
          ];
        },
      ),
    ) as {
      [K in keyof Outputs]: Outputs[K] extends MethodOutput<infer F extends z.ZodRawShape>
        ? z.ZodObject<typeof methodState & F>
        : never;
    },
  )
  .meta({
    description: 'Every method, each with whether it was requested and whether it passed.',
    examples: [EXAMPLE_VERIFICATION_METHODS],
  });

export type VerificationMethodsWire = z.infer<typeof verificationMethodsOutput>;

/** A case's `verification_methods`, read from its steps. */
export function verificationMethodsWire(
  steps: ReadonlyArray<{ method: VerificationMethod; state: string; settings: Record<string, unknown> }>,
): VerificationMethodsWire {
  return Object.fromEntries(
    METHOD_MODULES.map(({ definition: { key } }) => {
      const step = steps.find((s) => s.method === key);
      const output: MethodOutput = MODULE_BY_KEY[key].output;
      return [
        key,
        {
          requested: step !== undefined,
          verified: step?.state === 'verified',
          ...output.read(step?.settings ?? null),
        },
      ];
    }),
  ) as VerificationMethodsWire;
}
