package fjord.compat;

import static fjord.compat.Client.check;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The transaction scenarios with the Java client: the same steps and checks as compat/lib/txn.js
 * (txn-consume-transform-produce, txn-zombie-fenced; read the description there). A KafkaProducer with a
 * transactional.id, and a KafkaConsumer in a group with isolation.level=read_committed whose groupMetadata() goes
 * with sendOffsetsToTransaction (KIP-447). After an abort the consumer seeks to the group's committed offsets:
 * KafkaConsumer.committed() fetches them as stable (require_stable), so a transaction just committed is in them.
 */
final class Txn {
  static final int INPUT_RECORDS = 120;
  static final int PARTITIONS = 6;
  static final int RECORDS_PER_TXN = 10;
  static final int ABORT_EVERY = 3; // transaction t is aborted when t % ABORT_EVERY == 0
  static final String END_KEY = "end";
  static final long LOOP_TIMEOUT_MS = 30_000;
  /** A pause after each commit: the cluster rows stretch the loop so that the harness can kill the coordinator mid-run. */
  static final long PAUSE_MS = Long.parseLong(System.getenv().getOrDefault("FJORD_COMPAT_TXN_PAUSE_MS", "0"));
  static final Pattern OUTPUT = Pattern.compile("out-(\\d+):txn-(\\d+)");

  private final Client client;

  Txn(Client client) {
    this.client = client;
  }

  static byte[] outputValue(int i, int t) {
    return Data.bytes("out-" + i + ":txn-" + t);
  }

  static int index(byte[] key) {
    return Integer.parseInt(new String(key, StandardCharsets.UTF_8).substring("key-".length()));
  }

  /** What the transactional loop did: the input indexes each committed or aborted transaction wrote. */
  static final class Transactions {
    final Map<Integer, List<Integer>> committed = new TreeMap<>();
    final Map<Integer, List<Integer>> aborted = new TreeMap<>();

    boolean complete() {
      Set<Integer> done = new HashSet<>();
      committed.values().forEach(done::addAll);
      return done.size() == INPUT_RECORDS;
    }

    static int count(Map<Integer, List<Integer>> m) {
      return m.values().stream().mapToInt(List::size).sum();
    }

    String show() {
      return committed.size() + " transactions committed (" + count(committed) + " records), " + aborted.size() + " aborted (" + count(aborted) + " records)";
    }
  }

  KafkaProducer<byte[], byte[]> producer(String transactionalId) {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, client.bootstrap);
    props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
    KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    producer.initTransactions();
    return producer;
  }

  KafkaConsumer<byte[], byte[]> groupConsumer(String group) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, client.bootstrap);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, String.valueOf(RECORDS_PER_TXN));
    props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** The consume-transform-produce loop: runs until every input record was written by a committed transaction. */
  static Transactions transform(KafkaConsumer<byte[], byte[]> consumer, KafkaProducer<byte[], byte[]> producer, String output) throws InterruptedException {
    Transactions txns = new Transactions();
    long deadline = System.currentTimeMillis() + LOOP_TIMEOUT_MS;
    for (int t = 1; !txns.complete(); ) {
      check(System.currentTimeMillis() < deadline, "the transactional loop did not write every input record in " + LOOP_TIMEOUT_MS + " ms: " + txns.show());
      ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
      if (records.isEmpty()) continue;
      producer.beginTransaction();
      Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
      List<Integer> ids = new ArrayList<>();
      for (ConsumerRecord<byte[], byte[]> r : records) {
        ids.add(index(r.key()));
        producer.send(new ProducerRecord<>(output, r.key(), outputValue(index(r.key()), t)));
        next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
      }
      producer.sendOffsetsToTransaction(next, consumer.groupMetadata());
      if (t % ABORT_EVERY == 0) {
        producer.flush(); // abortTransaction would fail the records not sent yet
        producer.abortTransaction();
        txns.aborted.put(t, ids);
        for (Map.Entry<TopicPartition, OffsetAndMetadata> c : consumer.committed(next.keySet()).entrySet()) {
          if (c.getValue() == null) consumer.seekToBeginning(List.of(c.getKey()));
          else consumer.seek(c.getKey(), c.getValue().offset());
        }
      } else {
        producer.commitTransaction();
        txns.committed.put(t, ids);
        Thread.sleep(PAUSE_MS);
      }
      t++;
    }
    return txns;
  }

  /** One "end" record on each partition, outside any transaction: a consumer that reads it got past every transaction. */
  void writeEnd(String topic, int partitions) throws Exception {
    List<ProducerRecord<byte[], byte[]>> ends = new ArrayList<>();
    for (int p = 0; p < partitions; p++) ends.add(new ProducerRecord<>(topic, p, Data.bytes(END_KEY), Data.bytes(END_KEY)));
    client.produce(ends);
  }

  /** The records without the "end" ones; checks that every partition had its "end" record. */
  static List<Data.Rec> withoutEnd(List<Data.Rec> records, int partitions, String what) {
    Set<Integer> ends = new HashSet<>();
    List<Data.Rec> rest = new ArrayList<>();
    for (Data.Rec r : records) {
      if (r.key() != null && END_KEY.equals(new String(r.key(), StandardCharsets.UTF_8))) ends.add(r.partition());
      else rest.add(r);
    }
    for (int p = 0; p < partitions; p++) check(ends.contains(p), what + ": no \"end\" record read on output partition " + p + ": the consumer did not get past the transactions there");
    return rest;
  }

  /** {i, t} of an output record key-<i> / out-<i>:txn-<t>. */
  static int[] parseOutput(Data.Rec r, String what) {
    Matcher m = OUTPUT.matcher(new String(r.value(), StandardCharsets.UTF_8));
    check(m.matches() && Data.show(r.key()).equals(Data.show(Data.bytes("key-" + m.group(1)))),
        what + ": unexpected record " + Data.show(r.key()) + " / " + Data.show(r.value()) + " at " + r.partition() + "/" + r.offset());
    return new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))};
  }

  String consumeTransformProduce() throws Exception {
    String input = client.createTopic("txn-in", PARTITIONS, Map.of());
    String output = client.createTopic("txn-out", PARTITIONS, Map.of());
    client.produce(Client.plain(input, INPUT_RECORDS));
    String group = input + "-group";
    Transactions txns;
    String transactionalId = input + "-txn";
    short epochBefore;
    short epochAfter;
    try (KafkaConsumer<byte[], byte[]> consumer = groupConsumer(group); KafkaProducer<byte[], byte[]> producer = producer(transactionalId)) {
      consumer.subscribe(List.of(input));
      epochBefore = producerEpoch(transactionalId);
      txns = transform(consumer, producer, output);
      epochAfter = producerEpoch(transactionalId);
    }
    String epochs = checkEpochs(epochBefore, epochAfter, txns.committed.size() + txns.aborted.size());
    writeEnd(output, PARTITIONS);
    check(!txns.aborted.isEmpty(), "no transaction was aborted: " + txns.show());

    Map<Integer, Integer> seen = new HashMap<>(); // i -> t
    for (Data.Rec r : withoutEnd(client.consumeAll(output, PARTITIONS, ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), PARTITIONS, "read_committed")) {
      int[] it = parseOutput(r, "read_committed");
      check(!txns.aborted.containsKey(it[1]), "read_committed returned out-" + it[0] + " of aborted transaction " + it[1] + " (at " + r.partition() + "/" + r.offset() + ")");
      check(txns.committed.getOrDefault(it[1], List.of()).contains(it[0]), "read_committed returned out-" + it[0] + " of transaction " + it[1] + ", which the client did not commit with it");
      Integer before = seen.put(it[0], it[1]);
      check(before == null, "read_committed returned input record " + it[0] + " twice: by transactions " + before + " and " + it[1]);
    }
    List<Integer> missing = new ArrayList<>();
    for (int i = 0; i < INPUT_RECORDS; i++) if (!seen.containsKey(i)) missing.add(i);
    check(missing.isEmpty(), "read_committed: " + missing.size() + " input records not in the output: " + missing.subList(0, Math.min(10, missing.size())));

    Map<String, Integer> written = new HashMap<>(); // "i:t" -> times read
    for (Data.Rec r : withoutEnd(client.consumeAll(output, PARTITIONS, ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted"), PARTITIONS, "read_uncommitted")) {
      int[] it = parseOutput(r, "read_uncommitted");
      written.merge(it[0] + ":" + it[1], 1, Integer::sum);
    }
    for (Map.Entry<String, Map<Integer, List<Integer>>> kind : Map.of("committed", txns.committed, "aborted", txns.aborted).entrySet()) {
      for (Map.Entry<Integer, List<Integer>> txn : kind.getValue().entrySet()) {
        for (int i : txn.getValue()) {
          Integer n = written.get(i + ":" + txn.getKey());
          check(n != null && n == 1, "read_uncommitted: out-" + i + " of " + kind.getKey() + " transaction " + txn.getKey() + " read " + (n == null ? 0 : n) + " times, expected once");
        }
      }
    }
    int expected = Transactions.count(txns.committed) + Transactions.count(txns.aborted);
    int total = written.values().stream().mapToInt(Integer::intValue).sum();
    check(total == expected, "read_uncommitted returned " + total + " output records, the transactions wrote " + expected);

    Group.checkCommittedAtEnd(client, group, input);
    return txns.show() + "; read_committed: each of " + INPUT_RECORDS + " records once, none aborted; read_uncommitted: all " + expected + "; committed offsets = end offsets; " + epochs;
  }

  /** The producer epoch of the transactional id, as the coordinator describes it (DescribeTransactions). */
  short producerEpoch(String transactionalId) throws Exception {
    return (short) client.admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get().producerEpoch();
  }

  /**
   * Which transaction protocol the producer used, from the producer epoch over its transactions: transaction version
   * 2 (KIP-890) bumps it at every transaction's end, version 1 keeps it. The harness says which version the broker
   * finalizes (FJORD_COMPAT_TXN_VERSION), and the Java client uses version 2 when it is finalized: the epochs must
   * show it. Without the variable, only reported.
   */
  static String checkEpochs(short before, short after, int transactions) {
    String finalized = System.getenv("FJORD_COMPAT_TXN_VERSION");
    String seen = "producer epoch " + before + " -> " + after + " over " + transactions + " transactions";
    if (finalized == null) return seen;
    boolean v2 = Integer.parseInt(finalized) >= 2;
    int bumps = after - before;
    check(v2 ? bumps == transactions : bumps == 0, seen + ": expected " + (v2 ? transactions + " epoch bumps (transaction version 2 finalized)" : "no bump (transaction version " + finalized + ")"));
    return seen + " (transaction version " + (v2 ? 2 : 1) + ")";
  }

  static boolean isFencing(Throwable e) {
    for (Throwable x = e; x != null; x = x.getCause() == x ? null : x.getCause()) {
      if (x instanceof ProducerFencedException || x instanceof InvalidProducerEpochException) return true;
    }
    return false;
  }

  static List<String> values(List<Data.Rec> records) {
    List<String> out = new ArrayList<>();
    for (Data.Rec r : records) out.add(new String(r.value(), StandardCharsets.UTF_8));
    return out;
  }

  String zombieFenced() throws Exception {
    String topic = client.createTopic("zombie", 1, Map.of());
    String transactionalId = topic + "-txn";
    Throwable fenceError = null;
    boolean committedAfterFence = false;
    try (KafkaProducer<byte[], byte[]> first = producer(transactionalId)) {
      first.beginTransaction();
      first.send(new ProducerRecord<>(topic, 0, null, Data.bytes("a-0"))).get();
      try (KafkaProducer<byte[], byte[]> second = producer(transactionalId)) { // initTransactions: fences the first, aborts its transaction
        second.beginTransaction();
        second.send(new ProducerRecord<>(topic, 0, null, Data.bytes("b-0"))).get();
        second.commitTransaction();
      }
      try {
        first.send(new ProducerRecord<>(topic, 0, null, Data.bytes("a-1"))).get();
      } catch (Exception e) {
        fenceError = e;
      }
      try {
        first.commitTransaction();
        committedAfterFence = true;
      } catch (Exception e) {
        if (fenceError == null) fenceError = e;
      }
    }
    writeEnd(topic, 1);
    check(fenceError != null, "the fenced producer A wrote and committed after B initialized with the same transactional.id: no error");
    check(isFencing(fenceError), "producer A failed with " + fenceError + ", not with a fencing error (ProducerFencedException / InvalidProducerEpochException)");
    check(!committedAfterFence, "producer A's commit succeeded after it was fenced (the send failed with " + fenceError + ")");
    List<String> committed = values(withoutEnd(client.consumeAll(topic, 1, ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), 1, "read_committed"));
    check(committed.equals(List.of("b-0")), "read_committed returned " + committed + ", expected [b-0]: nothing of the fenced producer");
    List<String> uncommitted = values(withoutEnd(client.consumeAll(topic, 1, ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted"), 1, "read_uncommitted"));
    check(uncommitted.equals(List.of("a-0", "b-0")), "read_uncommitted returned " + uncommitted + ", expected [a-0, b-0] (A's first record, aborted by the fencing, then B's)");
    return "A fenced: " + fenceError + "; read_committed [b-0], read_uncommitted [a-0, b-0]";
  }
}
