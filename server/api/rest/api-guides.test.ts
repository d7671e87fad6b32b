import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apiGuides } from './api-guides';

describe('the guides published in the OpenAPI document', () => {
  it("are the integrators' (numbered) guides, with {base_url} as the serving origin", () => {
    const guides = apiGuides('https://vouch.example.com');
    const numbered = readdirSync('docs/guides').filter((name) => /^\d+-.*\.md$/.test(name));
    expect(numbered.length).toBeGreaterThan(0);
    expect(guides).not.toContain('{base_url}');
    expect(guides).toContain('https://vouch.example.com');
  });

  it("leave the operators' guides (deploying, operations) unpublished", () => {
    expect(readdirSync('docs/guides')).toContain('deploy-kubernetes.md');
    expect(apiGuides('https://vouch.example.com')).not.toContain('# Deploying Vouch on Kubernetes');
  });
});
