/** The admin commands of `fjord`, each a yargs command module of its own file. */
import type { CommandModule } from 'yargs';
import { consumeCommand } from './consume-command';
import { groupsCommand } from './groups-command';
import { produceCommand } from './produce-command';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const ADMIN_COMMANDS: CommandModule<any, any>[] = [
  // h-groups
  groupsCommand, produceCommand, consumeCommand,
];
