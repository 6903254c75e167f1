package fjord.compat;

import static fjord.compat.Client.check;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The log-cleanup scenarios with the Java client: the same steps and checks as compat/lib/cleanup.js (compaction,
 * retention; read the description there). KafkaProducer writes (a null value is a tombstone, a record's timestamp is
 * set in its ProducerRecord); group-less KafkaConsumers read, beginningOffsets() gives the earliest offset, and the
 * consumer that is behind seek()s below the log start with auto.offset.reset=earliest.
 */
final class Cleanup {
  static final int KEYS = 10;
  static final int ROUNDS = 3;
  static final List<Integer> DELETED = List.of(0, 1); // keys that get a tombstone
  static final long SEGMENT_MS = 500;
  static final long DELETE_RETENTION_MS = 1000;
  static final long CLEANING_TIMEOUT_MS = 20_000;

  private final Client client;

  Cleanup(Client client) {
    this.client = client;
  }

  static String ck(int k) {
    return "ck-" + k;
  }

  static String string(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  static String show(List<Data.Rec> records) {
    List<String> out = new ArrayList<>();
    for (Data.Rec r : records) out.add("[" + r.offset() + ", " + string(r.key()) + ", " + string(r.value()) + "]");
    return out.toString();
  }

  /**
   * Checks the records: the last is `sentinel` (in the active segment), the others exactly the latest value of each
   * key in `expected` (key -> value or null), one each, nothing else.
   */
  static void verifyCompacted(List<Data.Rec> all, Map<String, String> expected, String sentinel) {
    check(!all.isEmpty() && sentinel.equals(string(all.get(all.size() - 1).value())), "the last record is not the sentinel " + sentinel + ": " + show(all));
    List<Data.Rec> records = all.subList(0, all.size() - 1);
    for (int i = 1; i < records.size(); i++) check(records.get(i).offset() > records.get(i - 1).offset(), "offsets not increasing: " + show(records));
    Map<String, String> seen = new TreeMap<>();
    for (Data.Rec r : records) {
      String k = string(r.key());
      check(!seen.containsKey(k), "key " + k + " read twice: " + show(records));
      seen.put(k, string(r.value()));
    }
    check(seen.equals(expected), "read " + show(records) + ", expected one record per key: " + expected);
  }

  void compaction() throws Exception {
    String topic = client.createTopic("compaction", 1, Map.of("cleanup.policy", "compact", "segment.ms", String.valueOf(SEGMENT_MS),
        "min.cleanable.dirty.ratio", "0.01", "delete.retention.ms", String.valueOf(DELETE_RETENTION_MS)));
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) for (int k = 0; k < KEYS; k++) records.add(new ProducerRecord<>(topic, Data.bytes(ck(k)), Data.bytes(ck(k) + "@" + round)));
    for (int k : DELETED) records.add(new ProducerRecord<>(topic, Data.bytes(ck(k)), null));
    Map<String, String> latest = new TreeMap<>();
    for (ProducerRecord<byte[], byte[]> r : records) latest.put(string(r.key()), string(r.value()));
    client.produce(records);
    Thread.sleep(SEGMENT_MS + 200);
    client.produce(List.of(new ProducerRecord<>(topic, Data.bytes("end"), Data.bytes("end-1"))));
    Client.retry(() -> {
      verifyCompacted(client.consumeAll(topic, 1), latest, "end-1");
      return null;
    }, CLEANING_TIMEOUT_MS);

    Thread.sleep(Math.max(DELETE_RETENTION_MS, SEGMENT_MS) + 200);
    client.produce(List.of(new ProducerRecord<>(topic, Data.bytes("end"), Data.bytes("end-2"))));
    latest.put("end", "end-1");
    for (int k : DELETED) latest.remove(ck(k));
    Client.retry(() -> {
      verifyCompacted(client.consumeAll(topic, 1), latest, "end-2");
      return null;
    }, CLEANING_TIMEOUT_MS);
  }

  void retention() throws Exception {
    String topic = client.createTopic("retention", 1, Map.of("retention.ms", "60000"));
    TopicPartition tp = new TopicPartition(topic, 0);
    long old = System.currentTimeMillis() - 3_600_000;
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    for (int i = 0; i < 20; i++) records.add(Client.rec(topic, old, Data.key(i), Data.value(i), List.of()));
    client.produce(records);
    Client.retry(() -> {
      long earliest;
      try (KafkaConsumer<byte[], byte[]> consumer = client.consumer()) {
        earliest = consumer.beginningOffsets(List.of(tp)).get(tp);
      }
      check(earliest == 20, "earliest offset " + earliest + ", expected 20 once retention deleted the old segments");
      return null;
    }, 15_000);
    records.clear();
    for (int i = 20; i < 30; i++) records.add(Client.rec(topic, null, Data.key(i), Data.value(i), List.of()));
    client.produce(records);
    List<Data.Rec> read = readBehind(tp, 5, 10);
    boolean ok = read.size() == 10;
    for (int i = 0; ok && i < 10; i++) {
      Data.Rec r = read.get(i);
      ok = r.offset() == 20 + i && Arrays.equals(r.key(), Data.key(20 + i)) && Arrays.equals(r.value(), Data.value(20 + i));
    }
    check(ok, "a consumer at offset 5 read " + show(read) + ", expected records 20..29 (reset to the earliest)");
  }

  /** The first n records a consumer reads when it starts at `offset` with auto.offset.reset=earliest. */
  List<Data.Rec> readBehind(TopicPartition tp, long offset, int n) {
    try (KafkaConsumer<byte[], byte[]> consumer = client.consumer(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest")) {
      consumer.assign(List.of(tp));
      consumer.seek(tp, offset);
      List<Data.Rec> read = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 20_000;
      while (read.size() < n && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) read.add(new Data.Rec(r.partition(), r.offset(), r.key(), r.value(), List.of()));
      }
      return read.subList(0, Math.min(n, read.size()));
    }
  }
}
