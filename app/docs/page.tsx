import type { Metadata } from 'next';
import { ERROR_TABLE } from '@/server/api/error-table';
import { buildOpenApiDocument } from '@/server/api/rest/openapi-document';
import { env } from '@/server/platform/env';
import { APP_ERRORS } from '@/server/platform/errors';

export const metadata: Metadata = { title: 'API reference' };
export const dynamic = 'force-dynamic';

type Schema = Record<string, unknown>;
type Operation = {
  summary?: string;
  description?: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Schema; description?: string }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
};

function anchor(method: string, path: string): string {
  return `${method}-${path}`.replace(/[^a-zA-Z0-9]+/g, '-');
}

/** The API reference, rendered on the server from the same OpenAPI document clients download. */
export default function DocsPage() {
  const doc = buildOpenApiDocument(env().BASE_URL);
  const operations = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(([method, op]) => ({
      path,
      method: method.toUpperCase(),
      op,
    })),
  );
  return (
    <main>
      <h1>Vouch API reference</h1>
      <p>
        Base URL <code>{env().BASE_URL}/v1</code>. Authenticate every request except <code>GET /v1/ping</code>{' '}
        with <code>Authorization: Bearer vouch_live_…</code>. Bodies are JSON. Paths end with a slash except{' '}
        <code>/v1/ping</code>. The machine-readable document is{' '}
        <a href="/v1/openapi.json">/v1/openapi.json</a>.
      </p>
      <nav aria-label="Operations">
        <ul>
          {operations.map(({ path, method, op }) => (
            <li key={anchor(method, path)}>
              <a href={`#${anchor(method, path)}`}>
                <code>
                  {method} {path}
                </code>
              </a>{' '}
              — {op.summary}
            </li>
          ))}
        </ul>
      </nav>
      {operations.map(({ path, method, op }) => (
        <section
          key={anchor(method, path)}
          id={anchor(method, path)}
          aria-labelledby={`${anchor(method, path)}-h`}
        >
          <h2 id={`${anchor(method, path)}-h`}>
            <code>
              {method} {path}
            </code>
          </h2>
          {op.summary && <p>{op.summary}</p>}
          {op.description && <p>{op.description}</p>}
          {op.parameters && op.parameters.length > 0 && (
            <>
              <h3>Parameters</h3>
              <ul>
                {op.parameters.map((p) => (
                  <li key={`${p.in}-${p.name}`}>
                    <code>{p.name}</code> ({p.in}
                    {p.required ? ', required' : ''})
                  </li>
                ))}
              </ul>
            </>
          )}
          {op.requestBody?.content?.['application/json']?.schema && (
            <>
              <h3>Request body</h3>
              <pre>{JSON.stringify(op.requestBody.content['application/json'].schema, null, 2)}</pre>
            </>
          )}
          <h3>Responses</h3>
          <ul>
            {Object.entries(op.responses ?? {}).map(([status, response]) => (
              <li key={status}>
                <code>{status}</code> {response.description}
              </li>
            ))}
          </ul>
        </section>
      ))}
      <section aria-labelledby="errors-h">
        <h2 id="errors-h">Errors</h2>
        <p>
          Every error body is <code>{'{"error", "detail", "code"}'}</code>, <code>error</code> being the
          lower-case code.
        </p>
        <table>
          <thead>
            <tr>
              <th scope="col">Status</th>
              <th scope="col">Code</th>
              <th scope="col">Meaning</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(ERROR_TABLE).map(([code, entry]) => (
              <tr key={code}>
                <td>{entry.status}</td>
                <td>
                  <code>{code}</code>
                </td>
                <td>{APP_ERRORS[code as keyof typeof APP_ERRORS]}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </main>
  );
}
