/** The admin commands of `fjord`, each a yargs command module of its own file. */
import type { CommandModule } from 'yargs';
import { consoleCommand } from './console';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const ADMIN_COMMANDS: CommandModule<any, any>[] = [consoleCommand];
