import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The integrators' guides in docs/guides/ (the numbered Markdown files, in file-name order),
 * published in the OpenAPI document's description, so /docs shows them beside the reference, each
 * as a section of its own. The operators' guides beside them (deploying, operations) are not
 * published. Read from the working directory, which every process of the service runs in.
 */
function readGuides(): string {
  const folder = path.join(process.cwd(), 'docs', 'guides');
  return readdirSync(folder)
    .filter((name) => /^\d+-.*\.md$/.test(name))
    .sort()
    .map((name) => readFileSync(path.join(folder, name), 'utf8').trim())
    .join('\n\n');
}

const GUIDES = readGuides();

/**
 * The guides as one service publishes them: `{base_url}` in them (the API spec's name for the
 * service's public origin) becomes its own URL, so a command copied from /docs reaches the
 * service that served it.
 */
export function apiGuides(baseUrl: string): string {
  return GUIDES.replaceAll('{base_url}', baseUrl);
}
