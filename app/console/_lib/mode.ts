'use client';

import { api } from './trpc';

export type ConsoleMode = 'live' | 'test';

/** The live/test switch (the header's, and the hint on an empty list): every page then shows that mode. */
export async function switchMode(mode: ConsoleMode): Promise<void> {
  await api.session.chooseMode.mutate({ mode });
  // Every page shows the chosen mode's data: load it afresh.
  window.location.reload();
}
