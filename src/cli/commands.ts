/** The admin commands of `fjord`, each a yargs command module of its own file. */
import type { CommandModule } from 'yargs';
import { topicsCommand } from './topics-command';
import { configsCommand } from './configs-command';
import { aclsCommand } from './acls-command';
import { consoleCommand } from './console';
import { consumeCommand } from './consume-command';
import { groupsCommand } from './groups-command';
import { produceCommand } from './produce-command';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const ADMIN_COMMANDS: CommandModule<any, any>[] = [
  topicsCommand,
  configsCommand,
  aclsCommand,
  consoleCommand,
  // h-groups
  groupsCommand, produceCommand, consumeCommand,
];
