package fjord.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Fjord compatibility client: the Apache Kafka Java client. Usage: Client BOOTSTRAP SCENARIO (exit 0 = pass). */
public final class Client {
  final String bootstrap;
  final Admin admin;

  private Client(String bootstrap) {
    this.bootstrap = bootstrap;
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(AdminClientConfig.CLIENT_ID_CONFIG, "fjord-compat-java");
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
    this.admin = Admin.create(props);
  }

  void connect() throws Exception {
    DescribeClusterResult cluster = admin.describeCluster();
    Collection<Node> nodes = cluster.nodes().get();
    check(nodes.size() == 1, "expected 1 broker, got " + nodes);
    Node node = nodes.iterator().next();
    check((node.host() + ":" + node.port()).equals(bootstrap),
        "expected broker " + bootstrap + ", got " + node.host() + ":" + node.port());
    String clusterId = cluster.clusterId().get();
    check(clusterId != null && !clusterId.isEmpty(), "no cluster id");
  }

  void adminTopics() throws Exception {
    String name = "compat-java-" + System.nanoTime();
    admin.createTopics(List.of(new NewTopic(name, 3, (short) 1))).all().get();
    retry(() -> {
      Set<String> names = admin.listTopics().names().get();
      check(names.contains(name), "created topic " + name + " not listed in " + names);
      Map<String, TopicDescription> d = admin.describeTopics(List.of(name)).allTopicNames().get();
      int partitions = d.get(name).partitions().size();
      check(partitions == 3, "topic " + name + " has " + partitions + " partitions, expected 3");
      return null;
    });
    admin.deleteTopics(List.of(name)).all().get();
    retry(() -> {
      Set<String> names = admin.listTopics().names().get();
      check(!names.contains(name), "deleted topic " + name + " still listed");
      return null;
    });
  }

  // ----- data path: KafkaProducer (defaults: acks=all, idempotent) and a group-less KafkaConsumer (assign) -----

  String createTopic(String prefix, int partitions, Map<String, String> configs) throws Exception {
    String name = "compat-java-" + prefix + "-" + System.nanoTime();
    admin.createTopics(List.of(new NewTopic(name, partitions, Cluster.replicationFactor()).configs(configs))).all().get();
    return name;
  }

  static ProducerRecord<byte[], byte[]> rec(String topic, Long ts, byte[] key, byte[] value, List<Header> headers) {
    return new ProducerRecord<>(topic, null, ts, key, value, headers);
  }

  static List<ProducerRecord<byte[], byte[]>> plain(String topic, int n) {
    List<ProducerRecord<byte[], byte[]>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) out.add(rec(topic, null, Data.key(i), Data.value(i), Data.headers(i)));
    return out;
  }

  /** Sends every record and waits for every acknowledgement. */
  void produce(List<ProducerRecord<byte[], byte[]>> records, String... overrides) throws Exception {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
    for (int i = 0; i < overrides.length; i += 2) props.put(overrides[i], overrides[i + 1]);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (ProducerRecord<byte[], byte[]> r : records) acks.add(producer.send(r));
      producer.flush();
      for (Future<RecordMetadata> f : acks) f.get();
    }
  }

  KafkaConsumer<byte[], byte[]> consumer(String... overrides) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"); // no group.id: assign() only
    props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
    for (int i = 0; i < overrides.length; i += 2) props.put(overrides[i], overrides[i + 1]);
    return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** assign() every partition from the beginning and read up to the end offsets (consumer overrides: key, value, ...). */
  List<Data.Rec> consumeAll(String topic, int partitions, String... overrides) {
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(overrides)) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(topic, p));
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
      List<Data.Rec> out = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 30_000;
      while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
          out.add(new Data.Rec(r.partition(), r.offset(), r.key(), r.value(), Arrays.asList(r.headers().toArray())));
        }
      }
      check(tps.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp)), "end offsets " + ends + " not reached (timed out)");
      return out;
    }
  }

  void produceConsume() throws Exception {
    String topic = createTopic("pc", 3, Map.of());
    produce(plain(topic, 1000));
    Data.verifyRecords(consumeAll(topic, 3), 1000, Data::headers);
  }

  void compression() throws Exception {
    for (String codec : Data.CODECS) {
      String topic = createTopic(codec, 3, Map.of());
      produce(plain(topic, 200), ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
      try {
        Data.verifyRecords(consumeAll(topic, 3), 200, Data::headers);
      } catch (AssertionError e) {
        throw new AssertionError(codec + ": " + e.getMessage());
      }
    }
  }

  void largeRecords() throws Exception {
    String topic = createTopic("large", 1, Map.of("max.message.bytes", "2097152"));
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    for (int i = 0; i < 5; i++) records.add(rec(topic, null, Data.bytes("large-" + i), Data.large(i), List.of()));
    produce(records, ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "2097152");
    Data.verifyLarge(consumeAll(topic, 1));
  }

  void keyedPartitions() throws Exception {
    String topic = createTopic("keyed", 6, Map.of());
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    for (int i = 0; i < 600; i++) records.add(rec(topic, null, Data.bytes("key-" + (i % 20)), Data.value(i), List.of()));
    produce(records); // the default partitioner: murmur2 of the key
    Data.verifyKeyed(consumeAll(topic, 6), 600, 6);
  }

  void offsetsByTime() throws Exception {
    String topic = createTopic("time", 1, Map.of());
    long t = (System.currentTimeMillis() / 1000 - 60) * 1000;
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    for (int i = 0; i < 10; i++) records.add(rec(topic, t + i * 1000L, Data.key(i), Data.value(i), List.of()));
    produce(records);
    long[][] lookups = {{t - 500, 0}, {t, 0}, {t + 4000, 4}, {t + 4500, 5}, {t + 9000, 9}, {t + 10_000, -1}}; // -1: null
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
      for (long[] q : lookups) {
        OffsetAndTimestamp got = consumer.offsetsForTimes(Map.of(tp, q[0])).get(tp);
        long offset = got == null ? -1 : got.offset();
        check(offset == q[1], "offset for timestamp T" + (q[0] - t >= 0 ? "+" : "") + (q[0] - t) + ": " + got + ", expected " + (q[1] < 0 ? "null" : q[1]));
      }
    }
  }

  void idempotent() throws Exception {
    String topic = createTopic("idem", 3, Map.of());
    produce(plain(topic, 2000), ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    Data.verifyRecords(consumeAll(topic, 3), 2000, Data::headers);
  }

  /** Runs f until it succeeds or 10 s pass (metadata propagation). */
  static void retry(Callable<Void> f) throws Exception {
    retry(f, 10_000);
  }

  /** Runs f until it succeeds or timeoutMs pass. */
  static void retry(Callable<Void> f, long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (true) {
      try {
        f.call();
        return;
      } catch (AssertionError | Exception e) {
        if (System.currentTimeMillis() > deadline) throw e;
        Thread.sleep(200);
      }
    }
  }

  static void check(boolean ok, String message) {
    if (!ok) throw new AssertionError(message);
  }

  public static void main(String[] args) {
    if (args.length == 4 && args[1].equals("cluster-produce")) { // the cluster-failover row's producer
      try {
        Cluster.produce(args[0], args[2], Integer.parseInt(args[3]));
      } catch (Throwable e) {
        System.err.println("FAIL: " + e);
        System.exit(1);
      }
      System.exit(0);
    }
    if (args.length == 8 && args[1].equals("group-member")) { // a member in a JVM of its own (Group.memberProcess)
      Client client = new Client(args[0]);
      try {
        Group.memberProcess(client, args);
      } catch (Throwable e) {
        System.err.println("FAIL: " + e);
        System.exit(1);
      }
      System.exit(0);
    }
    if (args.length == 5 && args[1].equals("share-member")) { // share-queue's victim, a JVM of its own (Share.memberProcess)
      try {
        Share.memberProcess(args[0], args[2], args[3], Integer.parseInt(args[4]));
      } catch (Throwable e) {
        System.err.println("FAIL: " + e);
        System.exit(1);
      }
      System.exit(0);
    }
    if (args.length != 2) {
      System.err.println("usage: Client BOOTSTRAP SCENARIO");
      System.exit(2);
    }
    int code = 0;
    Client client = new Client(args[0]);
    try {
      switch (args[1]) {
        case "connect" -> client.connect();
        case "admin-topics" -> client.adminTopics();
        case "produce-consume" -> client.produceConsume();
        case "compression" -> client.compression();
        case "large-records" -> client.largeRecords();
        case "keyed-partitions" -> client.keyedPartitions();
        case "offsets-by-time" -> client.offsetsByTime();
        case "idempotent" -> client.idempotent();
        case "group-consume" -> Group.both(client, "classic", Group::consume);
        case "group-rebalance" -> Group.both(client, "classic", Group::rebalance);
        case "group-static" -> Group.both(client, "classic", Group::staticMembership);
        case "group-consume-consumer" -> Group.both(client, "consumer", Group::consume);
        case "group-rebalance-consumer" -> Group.both(client, "consumer", Group::rebalance);
        case "group-static-consumer" -> Group.both(client, "consumer", Group::staticMembership);
        case "group-migration" -> System.out.println(Group.migration(client));
        case "streams-wordcount" -> check(new StreamsWordCount().run(args[0]), "a Kafka Streams check failed (above)");
        case "txn-consume-transform-produce" -> System.out.println(new Txn(client).consumeTransformProduce());
        case "txn-zombie-fenced" -> System.out.println(new Txn(client).zombieFenced());
        case "compaction" -> new Cleanup(client).compaction();
        case "retention" -> new Cleanup(client).retention();
        case "share-queue" -> System.out.println(new Share(client).shareQueue());
        case "share-dlq" -> System.out.println(new Share(client).shareDlq());
        case "cluster-admin-partitions" -> System.out.println(new Partitions(client).run());
        case "secure-produce-consume" -> System.out.println(new Security(client).produceConsume());
        case "acl-denials" -> System.out.println(new Security(client).aclDenials());
        case "quota-throttle" -> System.out.println(new Security(client).quotaThrottle());
        default -> {
          System.err.println("unknown scenario " + args[1]);
          code = 2;
        }
      }
    } catch (Throwable e) {
      Throwable cause = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
      StringBuilder text = new StringBuilder("FAIL: " + cause);
      for (Throwable c = cause.getCause(); c != null && c != c.getCause(); c = c.getCause()) text.append(" <- caused by ").append(c);
      System.err.println(text);
      code = 1;
    } finally {
      client.admin.close(java.time.Duration.ofSeconds(2));
    }
    System.exit(code);
  }
}
