'use client';

import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import type { AppRouter } from '@/server/api/trpc/root';

/** The console's tRPC client: plain fetch to /api/trpc with the session cookie, no batching. */
export const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url: '/api/trpc' })] });

/** What pages change through (their forms keep their own busy, error and notice state). */
export const api = trpc.console;

/**
 * What pages read through: TanStack Query's options for each procedure (`useQueryApi().cases.list
 * .queryOptions(filters)`), from the provider in app/console/_lib/queries.tsx.
 */
const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

export { TRPCProvider };
export const useQueryApi = () => useTRPC().console;

/** An error in words a person can act on. */
export function describeError(error: unknown): string {
  if (error instanceof TRPCClientError) {
    const code = (error.data as { appCode?: string } | undefined)?.appCode;
    if (code === 'INTERNAL_ERROR') return 'Something went wrong on our side. Please try again.';
    if (error.message && !error.message.startsWith('Unexpected')) return error.message;
    return 'The server could not be reached. Check your connection and try again.';
  }
  if (error instanceof TypeError)
    return 'The server could not be reached. Check your connection and try again.';
  return error instanceof Error ? error.message : 'Something went wrong.';
}

/** The Request-Id of the call that failed, for a support request. */
export function errorRequestId(error: unknown): string | undefined {
  return error instanceof TRPCClientError
    ? (error.data as { requestId?: string } | undefined)?.requestId
    : undefined;
}

export function errorCode(error: unknown): string | undefined {
  return error instanceof TRPCClientError
    ? (error.data as { appCode?: string } | undefined)?.appCode
    : undefined;
}
