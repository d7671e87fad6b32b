/**
 * Loaded into a child process a test starts (`node --import <this>`: the `listen` CLI, the example
 * integration), so its calls to the app are checked like the test's own: answers from the ports
 * its parent watches go through the same checks, and what they find is appended to the file the
 * parent reads after each test (see `conformanceForChild`).
 */
import { conformanceCheckingFetch, watchPortsFromParent } from './openapi-conformance';

watchPortsFromParent();
globalThis.fetch = conformanceCheckingFetch(globalThis.fetch);
