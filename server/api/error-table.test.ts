import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toWireError } from './error-table';

const refusal = z.object({ subject_email: z.email() }).safeParse({ subject_email: 'nobody' }).error;

describe('errors on the wire', () => {
  it("an input its schema refuses is the client's 422, naming the field", () => {
    const wire = toWireError(
      new TRPCError({ code: 'BAD_REQUEST', message: 'Input validation failed', cause: refusal }),
    );
    expect(wire.status).toBe(422);
    expect(wire.body.code).toBe('VALIDATION_ERROR');
    expect(wire.body.detail).toContain('subject_email');
  });

  it("an answer failing its own output schema is the service's 500, not the client's 422", () => {
    const wire = toWireError(
      new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'Output validation failed', cause: refusal }),
    );
    expect(wire.status).toBe(500);
    expect(wire.body.code).toBe('INTERNAL_ERROR');
    expect(wire.body.detail).not.toContain('subject_email');
  });
});
