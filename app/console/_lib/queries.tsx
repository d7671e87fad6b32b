'use client';

import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { TRPCProvider, trpc } from './trpc';

/**
 * The console's reads go through TanStack Query. A failed read shows its error at once rather than
 * after retries (a 401 sends the layout to the sign-in page), and a page reads afresh when it
 * opens or after a change, not whenever the window regains focus.
 */
export function ConsoleQueries({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () => new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpc} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
