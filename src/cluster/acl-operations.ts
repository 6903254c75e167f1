// Authorized-operations bit fields (Metadata, DescribeCluster, DescribeGroups...). Fjord has no
// ACLs yet, so a client is allowed every operation that applies to the resource type (Kafka's
// AclEntry.supportedOperations). Bit n stands for Kafka's AclOperation code n.
const enum AclOperation {
  READ = 3, WRITE = 4, CREATE = 5, DELETE = 6, ALTER = 7, DESCRIBE = 8, CLUSTER_ACTION = 9,
  DESCRIBE_CONFIGS = 10, ALTER_CONFIGS = 11, IDEMPOTENT_WRITE = 12,
}

const bits = (...ops: AclOperation[]): number => ops.reduce((acc, op) => acc | (1 << op), 0);

/** Kafka's "not requested" sentinel: Integer.MIN_VALUE. */
export const NOT_REQUESTED = -2147483648;

export const TOPIC_OPERATIONS = bits(
  AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE, AclOperation.ALTER,
  AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
);

export const CLUSTER_OPERATIONS = bits(
  AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION,
  AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE,
);

export const GROUP_OPERATIONS = bits(
  AclOperation.READ, AclOperation.DELETE, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
);
