package fjord.compat;

import static fjord.compat.Client.check;
import static fjord.compat.Client.retry;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ElectionNotNeededException;

/**
 * The cluster-admin-partitions row (compat/cluster/partitions-test.js starts a 3-broker cluster): partition
 * management through the AdminClient alone, brokers a, b, c the cluster's three ids in order.
 *
 * <ol>
 *   <li>a 1-partition topic on [a, b] with 3 MiB of records;
 *   <li>incrementalAlterConfigs: the replication throttles at 1 B/s on every broker (BROKER) and on the
 *       partition's replicas (TOPIC: leader 0:a,0:b, follower 0:c), as kafka-reassign-partitions --throttle sets
 *       them; describeConfigs shows them;
 *   <li>alterPartitionReassignments to [b, c]: listPartitionReassignments shows it (adding c, removing a) and,
 *       2 s later, still (the throttle holds it: Kafka's quota lets one fetch of at most 1 MiB through);
 *       describeLogDirs: c's copy is smaller than a's log;
 *   <li>the throttles deleted (incrementalAlterConfigs DELETE): the move completes, replicas [b, c] in sync,
 *       a without the partition's log (describeLogDirs);
 *   <li>alterPartitionReassignments to [c, b] (a reorder, nothing to copy): the leader stays; electLeaders
 *       PREFERRED moves it to c; a second electLeaders answers ELECTION_NOT_NEEDED.
 * </ol>
 */
final class Partitions {
  private static final int RECORD_BYTES = 10240;
  private static final int RECORDS = 300;
  private static final String[] RATES = {"leader.replication.throttled.rate", "follower.replication.throttled.rate"};

  private final Client client;

  Partitions(Client client) {
    this.client = client;
  }

  String run() throws Exception {
    List<Integer> ids = new ArrayList<>(client.admin.describeCluster().nodes().get().stream().map(Node::id).sorted().toList());
    check(ids.size() == 3, "expected 3 brokers, got " + ids);
    int a = ids.get(0);
    int b = ids.get(1);
    int c = ids.get(2);
    String topic = "compat-java-adminp-" + System.nanoTime();
    TopicPartition tp = new TopicPartition(topic, 0);
    client.admin.createTopics(List.of(new NewTopic(topic, Map.of(0, List.of(a, b))))).all().get();
    Random random = new Random(15);
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    for (int i = 0; i < RECORDS; i++) {
      byte[] value = new byte[RECORD_BYTES];
      random.nextBytes(value);
      records.add(new ProducerRecord<>(topic, 0, Data.key(i), value));
    }
    client.produce(records);

    // The throttles, as the reassignment tool sets them.
    Map<ConfigResource, Collection<AlterConfigOp>> throttle = throttleOps(ids, topic, a, b, c, AlterConfigOp.OpType.SET);
    client.admin.incrementalAlterConfigs(throttle).all().get();
    ConfigResource brokerC = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(c));
    retry(() -> {
      Config config = client.admin.describeConfigs(List.of(brokerC)).all().get().get(brokerC);
      ConfigEntry rate = config.get("follower.replication.throttled.rate");
      check(rate != null && "1".equals(rate.value()) && rate.source() == ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG,
          "describeConfigs of broker " + c + ": follower.replication.throttled.rate is " + rate);
      return null;
    });

    client.admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(b, c))))).all().get();
    String listed = inProgress(tp, a, c);
    Thread.sleep(2000);
    inProgress(tp, a, c);
    long leaderSize = size(a, tp);
    long copySize = size(c, tp);
    check(copySize >= 0 && copySize < leaderSize, "describeLogDirs under the throttle: " + tp + " is " + copySize + " bytes on " + c + ", " + leaderSize + " on " + a);

    client.admin.incrementalAlterConfigs(throttleOps(ids, topic, a, b, c, AlterConfigOp.OpType.DELETE)).all().get();
    retry(() -> {
      check(!client.admin.listPartitionReassignments(Set.of(tp)).reassignments().get().containsKey(tp), "the move of " + tp + " still listed after the throttle was removed");
      TopicPartitionInfo p = partition(topic);
      check(p.replicas().stream().map(Node::id).toList().equals(List.of(b, c)) && p.isr().size() == 2, "after the move: " + p);
      return null;
    }, 60_000);
    retry(() -> {
      check(size(a, tp) < 0, "broker " + a + " still has " + tp + "'s log (describeLogDirs)");
      return null;
    }, 30_000);
    for (int id : ids) {
      Config config = client.admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(id)))).all().get().values().iterator().next();
      for (String rate : RATES) check(config.get(rate) == null || config.get(rate).source() != ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG, "broker " + id + " still has " + config.get(rate) + " after DELETE");
    }

    // A reorder: the preferred leader becomes c, the leader stays b until the election.
    client.admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(c, b))))).all().get();
    retry(() -> {
      TopicPartitionInfo p = partition(topic);
      check(p.replicas().stream().map(Node::id).toList().equals(List.of(c, b)), "after the reorder: " + p);
      return null;
    }, 30_000);
    TopicPartitionInfo reordered = partition(topic);
    check(reordered.leader() != null && reordered.leader().id() == b, "after the reorder to [" + c + ", " + b + "] the leader changed: " + reordered);
    Map<TopicPartition, Optional<Throwable>> elected = client.admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get();
    check(elected.containsKey(tp) && elected.get(tp).isEmpty(), "electLeaders PREFERRED: " + elected);
    retry(() -> {
      TopicPartitionInfo p = partition(topic);
      check(p.leader() != null && p.leader().id() == c, "after electLeaders PREFERRED: " + p);
      return null;
    });
    Map<TopicPartition, Optional<Throwable>> again = client.admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get();
    check(again.containsKey(tp) && again.get(tp).isPresent() && again.get(tp).get() instanceof ElectionNotNeededException,
        "a second electLeaders PREFERRED: " + again);

    Set<Integer> holders = new TreeSet<>();
    for (int id : ids) if (size(id, tp) >= 0) holders.add(id);
    check(holders.equals(new TreeSet<>(List.of(b, c))), "describeLogDirs: " + tp + " on brokers " + holders);
    return String.format("moved %s from [%d, %d] to [%d, %d] under a throttle (listed: %s; copy %d of %d bytes), throttle deleted, move completed;"
        + " reordered to [%d, %d] and elected %d (then ELECTION_NOT_NEEDED); logs on %s", tp, a, b, b, c, listed, copySize, leaderSize, c, b, c, holders);
  }

  private static Map<ConfigResource, Collection<AlterConfigOp>> throttleOps(List<Integer> ids, String topic, int a, int b, int c, AlterConfigOp.OpType op) {
    Map<ConfigResource, Collection<AlterConfigOp>> ops = new HashMap<>();
    for (int id : ids) {
      List<AlterConfigOp> rates = new ArrayList<>();
      for (String rate : RATES) rates.add(new AlterConfigOp(new ConfigEntry(rate, "1"), op));
      ops.put(new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(id)), rates);
    }
    ops.put(new ConfigResource(ConfigResource.Type.TOPIC, topic), List.of(
        new AlterConfigOp(new ConfigEntry("leader.replication.throttled.replicas", "0:" + a + ",0:" + b), op),
        new AlterConfigOp(new ConfigEntry("follower.replication.throttled.replicas", "0:" + c), op)));
    return ops;
  }

  /** Checks that the move is listed (adding c, removing a); returns its description. */
  private String inProgress(TopicPartition tp, int a, int c) throws Exception {
    String[] listed = new String[1];
    retry(() -> {
      PartitionReassignment r = client.admin.listPartitionReassignments(Set.of(tp)).reassignments().get().get(tp);
      check(r != null && r.addingReplicas().equals(List.of(c)) && r.removingReplicas().equals(List.of(a)) && new TreeSet<>(r.replicas()).size() == 3,
          "listPartitionReassignments for " + tp + ": " + r);
      listed[0] = r.toString();
      return null;
    });
    return listed[0];
  }

  private TopicPartitionInfo partition(String topic) throws Exception {
    return client.admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().get(0);
  }

  /** The partition's log size on broker id (describeLogDirs), -1 if it has none. */
  private long size(int id, TopicPartition tp) throws Exception {
    Map<String, LogDirDescription> dirs = client.admin.describeLogDirs(List.of(id)).allDescriptions().get().get(id);
    for (LogDirDescription dir : dirs.values()) {
      ReplicaInfo info = dir.replicaInfos().get(tp);
      if (info != null) return info.size();
    }
    return -1;
  }
}
