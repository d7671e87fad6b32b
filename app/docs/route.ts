import { DOCS_POLICY, docsPage } from '@/server/api/http/docs-page';

export const dynamic = 'force-static';

/** The API reference and guides, rendered in the browser from /v1/openapi.json. */
export function GET(): Response {
  return new Response(docsPage(), {
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': DOCS_POLICY,
      'Cache-Control': 'no-cache',
    },
  });
}
