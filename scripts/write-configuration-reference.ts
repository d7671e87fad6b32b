// Writes docs/configuration.md from server/platform/configuration-reference.ts (`npm run
// docs:configuration`); a unit test fails while the committed page differs from what this writes.
import { writeFileSync } from 'node:fs';
import { configurationPage } from '@/server/platform/configuration-reference';

writeFileSync('docs/configuration.md', configurationPage());
