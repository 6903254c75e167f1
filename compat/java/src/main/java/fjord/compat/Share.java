package fjord.compat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Share groups (KIP-932) with KafkaShareConsumer: share-queue (three consumers, one a JVM of its own that is
 * SIGKILLed holding a batch) and share-dlq (rejected and released-to-the-limit records on the KIP-1191 dead-letter
 * queue). The share-member mode is the victim's JVM.
 */
final class Share {
  static final int QUEUE_RECORDS = 10_000;
  static final int VICTIM_HOLDS_AFTER = 1000; // records the victim accepts before it holds a batch and waits to be killed
  static final int LOCK_MS = 15_000; // share.record.lock.duration.ms: group.share.min.record.lock.duration.ms, Kafka's minimum

  private final Client client;

  Share(Client client) {
    this.client = client;
  }

  /** Sets a share group's configs (GROUP resource, incrementalAlterConfigs), as kafka-configs --entity-type groups does. */
  void setGroupConfigs(String group, Map<String, String> configs) throws Exception {
    List<AlterConfigOp> ops = new ArrayList<>();
    configs.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
    client.admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
  }

  static KafkaShareConsumer<byte[], byte[]> shareConsumer(String bootstrap, String group, String clientId) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    props.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "100");
    return new KafkaShareConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** The partition's commit error, if any (commitSync answers per partition). */
  static Optional<KafkaException> commitError(Map<TopicIdPartition, Optional<KafkaException>> results) {
    return results.values().stream().filter(Optional::isPresent).map(Optional::get).findFirst();
  }

  static String offsets(Collection<Long> offsets) {
    StringBuilder s = new StringBuilder();
    for (long o : offsets) s.append(s.length() == 0 ? "" : ",").append(o);
    return s.toString();
  }

  // ----- share-queue -----

  /** What the survivors and the victim did with each offset (1 partition: the offset is the record). */
  static final class Ledger {
    final Map<Long, String> acceptedBy = new ConcurrentHashMap<>();
    final Map<Long, Long> firstDelivered = new ConcurrentHashMap<>(); // offset -> ms
    final Set<Long> doubleAccepted = ConcurrentHashMap.newKeySet();
    final List<String> badRedeliveries = new ArrayList<>();
    final AtomicInteger lockExpiryRedeliveries = new AtomicInteger();
    final AtomicInteger victimPrefetched = new AtomicInteger();
    final Map<Long, Short> redeliveredHeld = new ConcurrentHashMap<>(); // held offset -> delivery count seen by a survivor
    final AtomicLong firstHeldRedeliveryMs = new AtomicLong(-1);
    volatile Set<Long> held = Set.of();
    volatile long killedAtMs = -1;
    final List<String> commitErrors = new ArrayList<>();

    void delivered(long offset, short deliveryCount, long now) {
      Long first = firstDelivered.putIfAbsent(offset, now);
      if (first == null && deliveryCount == 1) return;
      if (held.contains(offset) && killedAtMs >= 0) {
        redeliveredHeld.put(offset, deliveryCount);
        firstHeldRedeliveryMs.compareAndSet(-1, now);
      } else if (first == null && deliveryCount == 2 && killedAtMs >= 0) {
        victimPrefetched.incrementAndGet(); // acquired by the victim's consumer but not yet polled by it when it was killed
      } else if (first != null && deliveryCount > 1 && now - first >= LOCK_MS) {
        lockExpiryRedeliveries.incrementAndGet();
      } else {
        synchronized (badRedeliveries) {
          badRedeliveries.add("offset " + offset + " delivered " + (first == null ? "first" : "again " + (now - first) + " ms after its first delivery") + " with deliveryCount " + deliveryCount);
        }
      }
    }

    void accepted(long offset, String by) {
      if (acceptedBy.putIfAbsent(offset, by) != null) doubleAccepted.add(offset);
    }
  }

  String shareQueue() throws Exception {
    String topic = client.createTopic("share-queue", 1, Map.of());
    String group = topic + "-group";
    setGroupConfigs(group, Map.of("share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", String.valueOf(LOCK_MS)));
    client.produce(Client.plain(topic, QUEUE_RECORDS));
    Ledger ledger = new Ledger();
    AtomicBoolean done = new AtomicBoolean();
    CountDownLatch victimStarted = new CountDownLatch(1);
    CountDownLatch victimKilled = new CountDownLatch(1);

    String java = ProcessHandle.current().info().command().orElse("java");
    Process victim = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
        "fjord.compat.Client", client.bootstrap, "share-member", topic, group, String.valueOf(VICTIM_HOLDS_AFTER))
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    AtomicInteger victimAccepted = new AtomicInteger();
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(victim.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          String[] parts = line.split(" ", 2);
          if (parts[0].equals("accepted")) {
            for (String o : parts[1].split(",")) {
              long offset = Long.parseLong(o);
              ledger.firstDelivered.putIfAbsent(offset, System.currentTimeMillis());
              ledger.accepted(offset, "victim");
              victimAccepted.incrementAndGet();
            }
            victimStarted.countDown();
          } else if (parts[0].equals("held")) {
            Set<Long> held = new TreeSet<>();
            for (String o : parts[1].split(",")) held.add(Long.parseLong(o));
            for (long o : held) ledger.firstDelivered.putIfAbsent(o, System.currentTimeMillis());
            ledger.held = held;
            ledger.killedAtMs = System.currentTimeMillis();
            victim.destroyForcibly(); // SIGKILL: no acknowledgement, no leave, the connection just closes
            victim.waitFor();
            victimKilled.countDown();
            victimStarted.countDown();
            return; // destroyForcibly closed its output
          } else {
            System.out.println("victim: " + line);
          }
        }
      } catch (Exception e) {
        System.out.println("victim reader: " + e);
      }
    });
    reader.setDaemon(true);
    reader.start();
    try {
      Client.check(victimStarted.await(30, TimeUnit.SECONDS), "the victim JVM accepted nothing in 30 s");
      List<Thread> survivors = new ArrayList<>();
      List<Throwable> errors = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        String name = "survivor-" + i;
        Thread t = new Thread(() -> {
          try (KafkaShareConsumer<byte[], byte[]> consumer = shareConsumer(client.bootstrap, group, "compat-java-" + name)) {
            consumer.subscribe(List.of(topic));
            while (!done.get()) {
              List<Long> polled = new ArrayList<>();
              for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                ledger.delivered(r.offset(), r.deliveryCount().orElse((short) -1), System.currentTimeMillis());
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                polled.add(r.offset());
              }
              if (polled.isEmpty()) continue;
              Optional<KafkaException> error = commitError(consumer.commitSync());
              if (error.isPresent()) {
                synchronized (ledger.commitErrors) {
                  ledger.commitErrors.add(name + ": " + error.get() + " for offsets " + polled.get(0) + ".." + polled.get(polled.size() - 1));
                }
              } else {
                for (long o : polled) ledger.accepted(o, name);
              }
              Thread.sleep(5); // some processing time, so that the other consumers get batches too
            }
          } catch (Throwable e) {
            synchronized (errors) {
              errors.add(e);
            }
          }
        }, name);
        t.start();
        survivors.add(t);
      }
      long deadline = System.currentTimeMillis() + 40_000;
      while (System.currentTimeMillis() < deadline && (ledger.acceptedBy.size() < QUEUE_RECORDS || victimKilled.getCount() > 0) && errors.isEmpty()) Thread.sleep(100);
      done.set(true);
      for (Thread t : survivors) t.join(30_000);
      Client.check(errors.isEmpty(), "a survivor failed: " + errors);
      Client.check(victimKilled.getCount() == 0, "the victim never held a batch (it accepted " + victimAccepted.get() + ")");
      Set<Long> missing = new TreeSet<>();
      for (long o = 0; o < QUEUE_RECORDS; o++) if (!ledger.acceptedBy.containsKey(o)) missing.add(o);
      Client.check(missing.isEmpty(), missing.size() + " records never accepted in 40 s, e.g. " + missing.stream().limit(10).toList());
      Client.check(ledger.doubleAccepted.isEmpty(), "records accepted twice: " + ledger.doubleAccepted);
      Client.check(ledger.badRedeliveries.isEmpty(), "redeliveries with no lock expiry nor kill behind them: " + ledger.badRedeliveries.subList(0, Math.min(10, ledger.badRedeliveries.size())));
      Client.check(ledger.commitErrors.isEmpty(), "acknowledgements failed: " + ledger.commitErrors);
      Client.check(ledger.redeliveredHeld.keySet().equals(ledger.held), "held by the victim " + ledger.held.size() + " records, redelivered to a survivor " + ledger.redeliveredHeld.size());
      Set<Short> counts = new TreeSet<>(ledger.redeliveredHeld.values());
      Client.check(counts.equals(Set.of((short) 2)), "the victim's records came back with deliveryCount " + counts + ", expected 2");
      Map<String, Integer> by = new TreeMap<>();
      ledger.acceptedBy.values().forEach(n -> by.merge(n, 1, Integer::sum));
      long heldFirst = ledger.held.stream().min(Long::compare).orElse(-1L);
      long heldLast = ledger.held.stream().max(Long::compare).orElse(-1L);
      return QUEUE_RECORDS + " records accepted exactly once: " + by + "; the victim JVM SIGKILLed holding " + ledger.held.size() + " records (offsets " + heldFirst + ".." + heldLast
          + "), redelivered to the survivors with deliveryCount 2, the first " + (ledger.firstHeldRedeliveryMs.get() - ledger.killedAtMs) + " ms after the kill; "
          + ledger.victimPrefetched.get() + " more acquired by the victim's consumer but not yet polled, delivered with deliveryCount 2 after the kill; other redeliveries (lock expiry): "
          + ledger.lockExpiryRedeliveries.get();
    } finally {
      done.set(true);
      victim.destroyForcibly();
    }
  }

  /**
   * The victim: accepts what it polls (printing "accepted o,o,..." once committed) until it has accepted holdAfter
   * records, then prints "held o,o,..." for the next batch it gets and waits, without acknowledging, to be killed.
   */
  static void memberProcess(String bootstrap, String topic, String group, int holdAfter) throws Exception {
    try (KafkaShareConsumer<byte[], byte[]> consumer = shareConsumer(bootstrap, group, "compat-java-victim")) {
      consumer.subscribe(List.of(topic));
      int accepted = 0;
      while (true) {
        List<ConsumerRecord<byte[], byte[]>> polled = new ArrayList<>();
        consumer.poll(Duration.ofMillis(200)).forEach(polled::add);
        if (polled.isEmpty()) continue;
        List<Long> offsets = polled.stream().map(ConsumerRecord::offset).toList();
        if (accepted >= holdAfter) {
          System.out.println("held " + offsets(offsets));
          System.out.flush();
          Thread.sleep(Long.MAX_VALUE);
        }
        for (ConsumerRecord<byte[], byte[]> r : polled) consumer.acknowledge(r, AcknowledgeType.ACCEPT);
        Optional<KafkaException> error = commitError(consumer.commitSync());
        if (error.isPresent()) {
          System.out.println("commit failed for offsets " + offsets.get(0) + ".." + offsets.get(offsets.size() - 1) + ": " + error.get());
        } else {
          System.out.println("accepted " + offsets(offsets));
          accepted += offsets.size();
        }
        System.out.flush();
        Thread.sleep(20); // slower than the survivors, so that all three take part
      }
    }
  }

  // ----- share-dlq -----

  static final List<String> DLQ_HEADERS = List.of("__dlq.errors.topic", "__dlq.errors.partition", "__dlq.errors.offset", "__dlq.errors.group",
      "__dlq.errors.delivery.count", "__dlq.errors.message");
  static final int DLQ_RECORDS = 20; // offsets 0..9 rejected, 10..19 released at each delivery until the limit (2)

  /** One DLQ record as seen: its headers as strings (printed with their bytes), key, value. */
  record DlqRecord(long offset, long timestamp, String timestampType, byte[] key, byte[] value, Map<String, byte[]> headers) {
    String header(String name) {
      byte[] v = headers.get(name);
      return v == null ? null : new String(v, StandardCharsets.UTF_8);
    }
  }

  String shareDlq() throws Exception {
    String topic = client.createTopic("share-dlq", 1, Map.of());
    String dlq = "dlq." + topic; // Kafka 4.4's errors.deadletterqueue.topic.name.prefix: "dlq."
    client.admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(dlq, 1, Cluster.replicationFactor())
        .configs(Map.of("errors.deadletterqueue.group.enable", "true")))).all().get();
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    for (int i = 0; i < DLQ_RECORDS; i++) records.add(Client.rec(topic, null, Data.bytes("k" + i), Data.bytes("v" + i), Data.headers(i)));
    client.produce(records);
    StringBuilder summary = new StringBuilder();
    // Two groups over the same records: the default (context headers only), then errors.deadletterqueue.copy.record.enable=true.
    for (boolean copy : new boolean[] {false, true}) {
      String group = topic + (copy ? "-copy" : "-headers");
      String groupDlq = dlq + (copy ? "-copy" : "");
      if (copy) {
        client.admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(groupDlq, 1, Cluster.replicationFactor())
            .configs(Map.of("errors.deadletterqueue.group.enable", "true")))).all().get();
      }
      setGroupConfigs(group, Map.of("share.auto.offset.reset", "earliest", "share.delivery.count.limit", "2",
          "errors.deadletterqueue.topic.name", groupDlq, "errors.deadletterqueue.copy.record.enable", String.valueOf(copy)));
      Map<Long, Integer> lastDelivery = rejectAndRelease(topic, group);
      List<DlqRecord> got = readDlq(groupDlq, DLQ_RECORDS);
      summary.append(copy ? "\n" : "").append("group ").append(group).append(" (copy.record.enable=").append(copy).append("): ")
          .append(got.size()).append(" DLQ records; deliveries ").append(lastDelivery.values().stream().distinct().sorted().toList()).append('\n');
      // the first of each kind in full (rejected, released to the limit); the checks cover all
      for (DlqRecord r : got) if (r.offset() == 0 || r.offset() == DLQ_RECORDS / 2) summary.append("  ").append(describe(r)).append('\n');
      checkDlq(got, topic, group, copy);
    }
    return summary.toString().trim();
  }

  /** Rejects offsets 0..9 and releases 10..19 until their last delivery; returns each offset's highest delivery count. */
  Map<Long, Integer> rejectAndRelease(String topic, String group) throws Exception {
    Map<Long, Integer> deliveries = new TreeMap<>();
    Set<Long> finished = new TreeSet<>();
    try (KafkaShareConsumer<byte[], byte[]> consumer = shareConsumer(client.bootstrap, group, "compat-java-dlq")) {
      consumer.subscribe(List.of(topic));
      long deadline = System.currentTimeMillis() + 40_000;
      while (finished.size() < DLQ_RECORDS && System.currentTimeMillis() < deadline) {
        boolean any = false;
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          any = true;
          int count = r.deliveryCount().orElse((short) -1);
          Client.check(!finished.contains(r.offset()), "offset " + r.offset() + " delivered again (deliveryCount " + count + ") after it was rejected or released at the limit");
          deliveries.put(r.offset(), count);
          if (r.offset() < DLQ_RECORDS / 2) {
            consumer.acknowledge(r, AcknowledgeType.REJECT);
            finished.add(r.offset());
          } else {
            consumer.acknowledge(r, AcknowledgeType.RELEASE);
            if (count >= 2) finished.add(r.offset());
          }
        }
        if (any) {
          Optional<KafkaException> error = commitError(consumer.commitSync());
          Client.check(error.isEmpty(), "acknowledgement failed: " + error);
        }
      }
      // Nothing more may come: every record is archived.
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(1500))) {
        throw new AssertionError("offset " + r.offset() + " delivered again (deliveryCount " + r.deliveryCount() + ") after the limit");
      }
    }
    Client.check(finished.size() == DLQ_RECORDS, "only " + finished.size() + " of " + DLQ_RECORDS + " records rejected or released to the limit in 40 s: " + deliveries);
    return deliveries;
  }

  List<DlqRecord> readDlq(String dlq, int expected) throws Exception {
    List<DlqRecord> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = client.consumer()) {
      TopicPartition tp = new TopicPartition(dlq, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long deadline = System.currentTimeMillis() + 30_000;
      while (out.size() < expected && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(300))) {
          Map<String, byte[]> headers = new java.util.LinkedHashMap<>(); // in the record's order
          for (Header h : r.headers()) headers.put(h.key(), h.value());
          out.add(new DlqRecord(r.offset(), r.timestamp(), r.timestampType().name, r.key(), r.value(), headers));
        }
      }
      // and no more than expected
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(1000))) out.add(new DlqRecord(r.offset(), r.timestamp(), r.timestampType().name, r.key(), r.value(), Map.of()));
    }
    return out;
  }

  static String bytes(byte[] b) {
    if (b == null) return "null";
    return "\"" + new String(b, StandardCharsets.UTF_8).replace("\n", "\\n") + "\" (0x" + HexFormat.of().formatHex(b) + ")";
  }

  static String describe(DlqRecord r) {
    StringBuilder s = new StringBuilder("dlq@" + r.offset() + " " + r.timestampType() + " " + r.timestamp() + " key=" + bytes(r.key()) + " value=" + bytes(r.value()) + " headers={");
    r.headers().forEach((k, v) -> s.append(k).append('=').append(bytes(v)).append("; "));
    return s.append('}').toString();
  }

  static void checkDlq(List<DlqRecord> got, String topic, String group, boolean copy) {
    Client.check(got.size() == DLQ_RECORDS, "the DLQ has " + got.size() + " records, expected " + DLQ_RECORDS);
    Set<Long> offsets = new TreeSet<>();
    for (DlqRecord r : got) {
      String where = "DLQ record " + r.offset() + ": ";
      long offset = Long.parseLong(String.valueOf(r.header("__dlq.errors.offset")));
      offsets.add(offset);
      Client.check(topic.equals(r.header("__dlq.errors.topic")), where + "__dlq.errors.topic " + r.header("__dlq.errors.topic"));
      Client.check("0".equals(r.header("__dlq.errors.partition")), where + "__dlq.errors.partition " + r.header("__dlq.errors.partition"));
      Client.check(group.equals(r.header("__dlq.errors.group")), where + "__dlq.errors.group " + r.header("__dlq.errors.group"));
      String count = offset < DLQ_RECORDS / 2 ? "1" : "2";
      Client.check(count.equals(r.header("__dlq.errors.delivery.count")), where + "__dlq.errors.delivery.count " + r.header("__dlq.errors.delivery.count") + ", expected " + count);
      String message = offset < DLQ_RECORDS / 2 ? "Offset rejected by client." : "Offset delivery count exceeded the threshold.";
      Client.check(message.equals(r.header("__dlq.errors.message")), where + "__dlq.errors.message " + r.header("__dlq.errors.message") + ", expected " + message);
      // Kafka 4.4 writes these six headers in this order, and not the original record's headers (even when copying it)
      Client.check(List.copyOf(r.headers().keySet()).equals(DLQ_HEADERS), where + "headers " + r.headers().keySet() + ", expected " + DLQ_HEADERS);
      if (copy) {
        Client.check(java.util.Arrays.equals(r.key(), Data.bytes("k" + offset)) && java.util.Arrays.equals(r.value(), Data.bytes("v" + offset)),
            where + "copy.record.enable: key/value not the original record's: " + describe(r));
      } else {
        Client.check(r.key() == null && r.value() == null, where + "copy.record.enable=false: expected no key and value, got " + describe(r));
      }
    }
    Set<Long> expected = new TreeSet<>();
    for (long o = 0; o < DLQ_RECORDS; o++) expected.add(o);
    Client.check(offsets.equals(expected), "DLQ records for offsets " + offsets + ", expected 0.." + (DLQ_RECORDS - 1) + " once each");
  }
}
