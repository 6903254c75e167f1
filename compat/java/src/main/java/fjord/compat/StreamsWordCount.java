package fjord.compat;

import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.GroupProtocol;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The streams-wordcount row: Kafka Streams 4.4 with the streams rebalance protocol (KIP-1071, group.protocol=streams) against a broker:
 * a word count (a repartition topic by word, a count store with its changelog) in two instances (two
 * KafkaStreams, each its own process id and state directory, in this JVM). Checks: the broker creates the
 * internal topics, both instances get tasks, the counts come out right; one instance closed (it leaves the
 * group), the other gets every task and counts on from the changelog. All of it twice: at least once, and exactly
 * once (exactly_once_v2: transactions, the offsets committed in them at the member epoch; output read read_committed). Prints one line per check, "ok ..." or
 * "FAIL ...", and fails (Client's row, or this main's exit status 1) if any did.
 *   java -cp "target/classes:target/lib/*" fjord.compat.StreamsWordCount BOOTSTRAP
 */
final class StreamsWordCount {
  static final int PARTITIONS = 4;
  /** 4 tasks reading the input, 4 reading the repartition topic. */
  static final int TASKS = 2 * PARTITIONS;
  private boolean failed;

  public static void main(String[] args) throws Exception {
    System.exit(new StreamsWordCount().run(args[0]) ? 0 : 1);
  }

  /** Whether every check passed, at least once and exactly once. */
  boolean run(String bootstrap) throws Exception {
    for (String guarantee : List.of(StreamsConfig.AT_LEAST_ONCE, StreamsConfig.EXACTLY_ONCE_V2)) {
      System.out.println(guarantee + ":");
      run(bootstrap, guarantee);
    }
    return !failed;
  }

  private void run(String bootstrap, String guarantee) throws Exception {
    String suffix = Long.toString(System.currentTimeMillis() % 1_000_000);
    String appId = "wordcount-" + suffix;
    String input = "words-in-" + suffix;
    String output = "words-out-" + suffix;
    Properties ap = new Properties();
    ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(ap)) {
      admin.createTopics(List.of(new NewTopic(input, PARTITIONS, (short) 1), new NewTopic(output, PARTITIONS, (short) 1))).all().get();

      KafkaStreams a = start(bootstrap, appId, input, output, guarantee);
      KafkaStreams b = start(bootstrap, appId, input, output, guarantee);
      check("both instances running with tasks of their own", waitFor(60, () -> activeTasks(a) > 0 && activeTasks(b) > 0
          && activeTasks(a) + activeTasks(b) == TASKS), "a=" + activeTasks(a) + " b=" + activeTasks(b));
      Set<String> topics = admin.listTopics().names().get();
      check("the broker created the repartition and changelog topics",
          topics.contains(appId + "-counts-repartition") && topics.contains(appId + "-counts-changelog"), topics.toString());

      Map<String, Long> expected = new TreeMap<>();
      produce(bootstrap, input, 0, 200, expected);
      check("the counts of the first 200 lines", waitForCounts(bootstrap, output, expected), expected.toString());

      b.close(Duration.ofSeconds(30));
      check("the remaining instance takes every task", waitFor(60, () -> activeTasks(a) == TASKS), "a=" + activeTasks(a));
      produce(bootstrap, input, 200, 400, expected);
      check("the counts go on from the changelog after the move", waitForCounts(bootstrap, output, expected), expected.toString());
      a.close(Duration.ofSeconds(30));
    }
  }

  static KafkaStreams start(String bootstrap, String appId, String input, String output, String guarantee) throws Exception {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, GroupProtocol.STREAMS.name().toLowerCase());
    p.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("fjord-streams").toString());
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    StreamsBuilder builder = new StreamsBuilder();
    builder.<String, String>stream(input)
        .flatMapValues(line -> Arrays.asList(line.split(" ")))
        .groupBy((key, word) -> word)
        .count(Materialized.as("counts"))
        .toStream()
        .to(output, Produced.with(Serdes.String(), Serdes.Long()));
    KafkaStreams streams = new KafkaStreams(builder.build(), p);
    streams.setUncaughtExceptionHandler(e -> {
      System.out.println("  stream thread failed: " + e);
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    streams.start();
    return streams;
  }

  static int activeTasks(KafkaStreams s) {
    if (s.state() != KafkaStreams.State.RUNNING) return s.state() == KafkaStreams.State.REBALANCING ? -1 : -2;
    int n = 0;
    for (ThreadMetadata t : s.metadataForLocalThreads()) n += t.activeTasks().size();
    return n;
  }

  /** Lines i in [from, to): "w(i % 7) w(i % 3)", counted into `expected`. */
  static void produce(String bootstrap, String topic, int from, int to, Map<String, Long> expected) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      for (int i = from; i < to; i++) {
        String line = "w" + (i % 7) + " x" + (i % 3);
        for (String w : line.split(" ")) expected.merge(w, 1L, Long::sum);
        producer.send(new ProducerRecord<>(topic, "line-" + i, line));
      }
    }
  }

  /** Reads the output from the start until each word's latest count is the expected one (60 s at most). */
  static boolean waitForCounts(String bootstrap, String topic, Map<String, Long> expected) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    Map<String, Long> latest = new HashMap<>();
    try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(p)) {
      List<org.apache.kafka.common.TopicPartition> partitions = new ArrayList<>();
      for (int i = 0; i < PARTITIONS; i++) partitions.add(new org.apache.kafka.common.TopicPartition(topic, i));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long deadline = System.currentTimeMillis() + 60_000;
      while (System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(500))) latest.put(r.key(), r.value());
        if (latest.equals(expected)) return true;
      }
    }
    System.out.println("  last seen: " + new TreeMap<>(latest));
    return false;
  }

  static boolean waitFor(int seconds, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.currentTimeMillis() + seconds * 1000L;
    while (System.currentTimeMillis() < deadline) {
      if (condition.getAsBoolean()) return true;
      Thread.sleep(250);
    }
    return condition.getAsBoolean();
  }

  void check(String what, boolean ok, String detail) {
    System.out.println((ok ? "ok   " : "FAIL ") + what + (ok ? "" : ": " + detail));
    if (!ok) failed = true;
  }
}
