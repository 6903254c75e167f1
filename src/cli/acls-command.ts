/**
 * `fjord acls list|create|delete`: kafka-acls' work with its flags (--allow-principal User:x
 * --operation Read --topic t --resource-pattern-type prefixed ...). `--json` prints AclBinding[].
 */
import type { Argv, CommandModule } from 'yargs';
import { ACL_OPERATIONS, createAcls, deleteAcls, listAcls, type AclBinding, type AclBindingFilter, type AclResourceType } from '../admin/acls';
import { AdminError } from '../admin/errors';
import { withConnection, withConnectionOptions, type ConnectionArgs } from './connection-options';
import { printJson, printRows, runCommand } from './output';

interface ResourceArgs {
  topic?: string[];
  group?: string[];
  transactionalId?: string[];
  cluster: boolean;
  resourcePatternType?: string;
}

interface BindingArgs extends ResourceArgs {
  allowPrincipal?: string[];
  denyPrincipal?: string[];
  allowHost?: string[];
  denyHost?: string[];
  operation?: string[];
}

function withResourceOptions(y: Argv) {
  return withConnectionOptions(y)
    .option('topic', { type: 'string', array: true, requiresArg: true, describe: 'Topic (name, prefix with --resource-pattern-type prefixed, or *)' })
    .option('group', { type: 'string', array: true, requiresArg: true, describe: 'Consumer group' })
    .option('transactional-id', { type: 'string', array: true, requiresArg: true, describe: 'Transactional id' })
    .option('cluster', { type: 'boolean', default: false, describe: 'The cluster resource' });
}

function withBindingOptions(y: Argv, patternTypes: string[], patternDefault: string) {
  return withResourceOptions(y)
    .option('resource-pattern-type', { type: 'string', choices: patternTypes, default: patternDefault, describe: 'How the resource name matches' })
    .option('allow-principal', { type: 'string', array: true, requiresArg: true, describe: 'Principal allowed, e.g. User:alice (repeatable)' })
    .option('deny-principal', { type: 'string', array: true, requiresArg: true, describe: 'Principal denied (repeatable)' })
    .option('allow-host', { type: 'string', array: true, requiresArg: true, describe: 'Host the allowed principals connect from (default *)' })
    .option('deny-host', { type: 'string', array: true, requiresArg: true, describe: 'Host the denied principals connect from (default *)' })
    .option('operation', { type: 'string', array: true, requiresArg: true, describe: `Operation: ${ACL_OPERATIONS.map(camel).join(', ')} (repeatable)` });
}

/** READ → Read, DESCRIBE_CONFIGS → DescribeConfigs: kafka-acls' spelling. */
function camel(name: string): string {
  return name.toLowerCase().replace(/(^|_)(\w)/g, (_m, _u, ch: string) => ch.toUpperCase());
}

/** The operation as Kafka names it (READ), from kafka-acls' spelling (Read, DescribeConfigs) or Kafka's. */
function operationName(op: string): string {
  const name = op.replace(/([a-z])([A-Z])/g, '$1_$2').replace(/-/g, '_').toUpperCase();
  if (!ACL_OPERATIONS.includes(name)) throw new AdminError(`unknown operation '${op}': one of ${ACL_OPERATIONS.map(camel).join(', ')}`);
  return name;
}

function resourcesOf(args: ResourceArgs): { resourceType: AclResourceType; resourceName: string }[] {
  return [
    ...(args.topic ?? []).map((name) => ({ resourceType: 'TOPIC' as const, resourceName: name })),
    ...(args.group ?? []).map((name) => ({ resourceType: 'GROUP' as const, resourceName: name })),
    ...(args.transactionalId ?? []).map((name) => ({ resourceType: 'TRANSACTIONAL_ID' as const, resourceName: name })),
    ...(args.cluster ? [{ resourceType: 'CLUSTER' as const, resourceName: 'kafka-cluster' }] : []),
  ];
}

/** Every (resource, principal, host, operation) the flags name, as kafka-acls combines them. */
function bindingsOf(args: BindingArgs): AclBinding[] {
  const resources = resourcesOf(args);
  if (resources.length === 0) throw new AdminError('give a resource: --topic, --group, --transactional-id or --cluster');
  const operations = (args.operation ?? []).map(operationName);
  if (operations.length === 0) throw new AdminError('give at least one --operation');
  const entries = [
    ...(args.allowPrincipal ?? []).flatMap((principal) => (args.allowHost ?? ['*']).map((host) => ({ principal, host, permissionType: 'ALLOW' as const }))),
    ...(args.denyPrincipal ?? []).flatMap((principal) => (args.denyHost ?? ['*']).map((host) => ({ principal, host, permissionType: 'DENY' as const }))),
  ];
  if (entries.length === 0) throw new AdminError('give --allow-principal or --deny-principal');
  const patternType = (args.resourcePatternType ?? 'literal').toUpperCase() as AclBinding['patternType'];
  return resources.flatMap((r) => entries.flatMap((e) => operations.map((operation) => ({ ...r, patternType, ...e, operation }))));
}

function printBindings(bindings: AclBinding[], args: ConnectionArgs): void {
  printRows(bindings, [
    { header: 'PRINCIPAL', value: (b) => b.principal },
    { header: 'HOST', value: (b) => b.host },
    { header: 'OPERATION', value: (b) => camel(b.operation) },
    { header: 'PERMISSION', value: (b) => camel(b.permissionType) },
    { header: 'RESOURCE', value: (b) => `${b.resourceType}:${b.resourceName}` },
    { header: 'PATTERN', value: (b) => b.patternType },
  ], args);
}

const list: CommandModule = {
  command: 'list',
  describe: 'List ACLs: all, or those on the resources given, or those of a principal',
  builder: (y: Argv) =>
    withResourceOptions(y)
      .option('resource-pattern-type', { type: 'string', choices: ['any', 'match', 'literal', 'prefixed'], default: 'any', describe: 'match: the ACLs that apply to the named resource' })
      .option('principal', { type: 'string', describe: 'Only the ACLs of this principal' }),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs & ResourceArgs & { principal?: string };
    return runCommand(() =>
      withConnection(args, async (c) => {
        const patternType = (args.resourcePatternType ?? 'any').toUpperCase() as AclBindingFilter['patternType'];
        const resources = resourcesOf(args);
        const filters: AclBindingFilter[] = resources.length ? resources.map((r) => ({ ...r, patternType, principal: args.principal })) : [{ patternType, principal: args.principal }];
        const bindings: AclBinding[] = [];
        for (const f of filters) bindings.push(...(await listAcls(c, f)));
        printBindings(bindings, args);
      }),
    );
  },
};

const create: CommandModule = {
  command: 'create',
  describe: 'Add ACLs: every principal x host x operation on every resource given',
  builder: (y: Argv) => withBindingOptions(y, ['literal', 'prefixed'], 'literal'),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs & BindingArgs;
    return runCommand(() =>
      withConnection(args, async (c) => {
        const bindings = bindingsOf(args);
        await createAcls(c, bindings);
        if (args.json) printJson(bindings);
        else {
          process.stdout.write(`Added ${bindings.length} ACL${bindings.length === 1 ? '' : 's'}:\n`);
          printBindings(bindings, args);
        }
      }),
    );
  },
};

const remove: CommandModule = {
  command: 'delete',
  describe: 'Remove the ACLs matching the flags (as create names them); prints those removed',
  builder: (y: Argv) => withBindingOptions(y, ['any', 'match', 'literal', 'prefixed'], 'literal'),
  handler: (argv) => {
    const args = argv as unknown as ConnectionArgs & BindingArgs;
    return runCommand(() =>
      withConnection(args, async (c) => {
        const deleted = await deleteAcls(c, bindingsOf(args));
        if (args.json) printJson(deleted);
        else {
          process.stdout.write(`Removed ${deleted.length} ACL${deleted.length === 1 ? '' : 's'}${deleted.length ? ':' : '.'}\n`);
          if (deleted.length) printBindings(deleted, args);
        }
      }),
    );
  },
};

export const aclsCommand: CommandModule = {
  command: 'acls <command>',
  describe: 'List, add and remove ACLs',
  builder: (y: Argv) => y.command(list).command(create).command(remove).demandCommand(1),
  handler: () => undefined,
};
