import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'Vouch', template: '%s · Vouch' },
  description: 'Workforce identity verification',
};

/**
 * Every page is rendered per request: the web process gives each page a fresh script nonce in its
 * Content-Security-Policy, and Next can put it on the page's scripts only while rendering it (a
 * page prerendered at build time would carry none, and its scripts would be refused).
 */
export const dynamic = 'force-dynamic';

export const viewport: Viewport = { width: 'device-width', initialScale: 1 };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
