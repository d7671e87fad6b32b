import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { ConsoleQueries } from '@/app/console/_lib/queries';
import './console.css';

export const metadata: Metadata = { title: { default: 'Console', template: '%s · Vouch console' } };

export default function ConsoleRootLayout({ children }: { children: ReactNode }) {
  return <ConsoleQueries>{children}</ConsoleQueries>;
}
