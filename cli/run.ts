import { isOffline, parseInvocation } from './usage';

/**
 * One run of the operator's command line, given its arguments (what follows `npm run --silent
 * cli --`): the usage asked for, or the command's JSON answer (its last line of output). Help
 * loads neither the service nor the database; a command that works on files alone loads only
 * what it reads them with.
 */
export async function runCli(argv: string[]): Promise<string> {
  const invocation = parseInvocation(argv);
  if ('help' in invocation) return invocation.help;
  if (isOffline(invocation.name)) {
    const { runOfflineCommand } = await import('./offline-commands');
    return JSON.stringify(await runOfflineCommand(invocation.name, invocation.values));
  }
  const { runCommand } = await import('./commands');
  return JSON.stringify(await runCommand(invocation.name, invocation.values, invocation.lists));
}
