'use client';

import type { inferRouterOutputs } from '@trpc/server';
import { createContext, useContext } from 'react';
import type { AppRouter } from '@/server/api/trpc/root';

export type Me = inferRouterOutputs<AppRouter>['console']['session']['me'];

export interface ConsoleSession {
  me: Me;
  /** Owners and admins change things; viewers only read (the server enforces it too). */
  canManage: boolean;
}

export const SessionContext = createContext<ConsoleSession | null>(null);

export function useSession(): ConsoleSession {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the signed-in console');
  return session;
}
