package fjord.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The security rows (compat/security/rows.js): the broker's endpoints and certificate files come in FJORD_SEC_*
 * variables; users are admin, alice and bob, each with password NAME-secret.
 */
final class Security {
  /** The transports of secure-produce-consume: SSL, mutual TLS, then each SASL mechanism over SASL_SSL. */
  static final List<String> TRANSPORTS = List.of("SSL", "MTLS", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER");
  static final int RECORDS = 20;

  private final Client client;

  Security(Client client) {
    this.client = client;
  }

  static String env(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) throw new IllegalStateException(name + " is not set (the security rows run under compat/run.js)");
    return v;
  }

  /** Client settings for a transport as `user`: SSL, MTLS, or a SASL mechanism over SASL_SSL (or over SASL_PLAINTEXT). */
  static Properties transport(String transport, String user, boolean tls) {
    Properties p = new Properties();
    if (tls) {
      p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
      p.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, env("FJORD_SEC_CA"));
    }
    switch (transport) {
      case "SSL" -> {
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, env("FJORD_SEC_SSL"));
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
      }
      case "MTLS" -> {
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, env("FJORD_SEC_MTLS"));
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
        p.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PEM");
        p.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, env("FJORD_SEC_CLIENT_KEYSTORE"));
      }
      default -> {
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, env(tls ? "FJORD_SEC_SASL_SSL" : "FJORD_SEC_SASL_PLAINTEXT"));
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, tls ? "SASL_SSL" : "SASL_PLAINTEXT");
        p.put(SaslConfigs.SASL_MECHANISM, transport);
        String credentials = " required username=\"" + user + "\" password=\"" + user + "-secret\";";
        p.put(SaslConfigs.SASL_JAAS_CONFIG, switch (transport) {
          case "PLAIN" -> "org.apache.kafka.common.security.plain.PlainLoginModule" + credentials;
          case "SCRAM-SHA-256", "SCRAM-SHA-512" -> "org.apache.kafka.common.security.scram.ScramLoginModule" + credentials;
          // an unsecured JWS (alg none) with sub=user, made by the client's default OAUTHBEARER login callback handler
          case "OAUTHBEARER" -> "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"" + user + "\";";
          default -> throw new IllegalArgumentException("unknown transport " + transport);
        });
      }
    }
    return p;
  }

  static Properties with(Properties base, Object... kv) {
    Properties p = new Properties();
    p.putAll(base);
    for (int i = 0; i < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
    return p;
  }

  static KafkaProducer<byte[], byte[]> producer(Properties base, Object... kv) {
    Properties defaults = with(base, ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000",
        ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000", ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    return new KafkaProducer<>(with(defaults, kv), new ByteArraySerializer(), new ByteArraySerializer());
  }

  static KafkaConsumer<byte[], byte[]> consumer(Properties base, Object... kv) {
    Properties defaults = with(base, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    return new KafkaConsumer<>(with(defaults, kv), new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** Reads partition 0 of topic group-less from the beginning until `count` records or 20 s; their values. */
  static List<String> readValues(KafkaConsumer<byte[], byte[]> consumer, String topic, int count) {
    TopicPartition tp = new TopicPartition(topic, 0);
    consumer.assign(List.of(tp));
    consumer.seekToBeginning(List.of(tp));
    return poll(consumer, count);
  }

  static List<String> poll(KafkaConsumer<byte[], byte[]> consumer, int count) {
    return poll(consumer, count, 20000);
  }

  /** Polls until `count` values or `ms` pass. */
  static List<String> poll(KafkaConsumer<byte[], byte[]> consumer, int count, long ms) {
    List<String> values = new ArrayList<>();
    long deadline = System.currentTimeMillis() + ms;
    while (values.size() < count && System.currentTimeMillis() < deadline) {
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) values.add(new String(r.value(), StandardCharsets.UTF_8));
    }
    return values;
  }

  /** secure-produce-consume: per transport, 20 records produced and read back exactly as alice (SSL: anonymous). */
  String produceConsume() throws Exception {
    List<String> done = new ArrayList<>();
    for (String t : TRANSPORTS) {
      String topic = "secure-java-" + t.toLowerCase();
      client.admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
      Properties base = transport(t, "alice", true);
      List<String> sent = new ArrayList<>();
      try (KafkaProducer<byte[], byte[]> producer = producer(base)) {
        for (int i = 0; i < RECORDS; i++) {
          String value = t + " record " + i + " \u00e9\n";
          sent.add(value);
          producer.send(new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8)));
        }
        producer.flush();
      } catch (Exception e) {
        throw new Exception(t + ": produce failed: " + e, e);
      }
      List<String> read;
      try (KafkaConsumer<byte[], byte[]> consumer = consumer(base)) {
        read = readValues(consumer, topic, RECORDS);
        read.addAll(poll(consumer, 1, 1000)); // anything after them
      }
      Client.check(read.equals(sent), t + ": read back " + read + ", expected " + sent);
      System.out.println(t + ": " + RECORDS + " records produced and read back"); // progress, shown if a later transport times out
      done.add(t);
    }
    return "produced and consumed " + RECORDS + " records over " + String.join(", ", done);
  }

  /** acl-denials (FJORD_SEC_PHASE denied or allowed): alice over SASL_PLAINTEXT with PLAIN. */
  String aclDenials() throws Exception {
    Properties alice = transport("PLAIN", "alice", false);
    String topic = "acl-java";
    if (env("FJORD_SEC_PHASE").equals("allowed")) {
      List<String> read;
      try (KafkaConsumer<byte[], byte[]> consumer = consumer(alice)) {
        read = readValues(consumer, topic, 5);
      }
      Client.check(read.size() >= 5 && read.subList(0, 5).equals(List.of("r0", "r1", "r2", "r3", "r4")), "group-less read of " + topic + " after the READ grant: " + read);
      try (KafkaConsumer<byte[], byte[]> consumer = consumer(alice, ConsumerConfig.GROUP_ID_CONFIG, "acl-ok-java", ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic")) {
        consumer.subscribe(List.of(topic));
        read = poll(consumer, 5);
        consumer.commitSync();
      }
      Client.check(read.size() >= 5, "group acl-ok-java read " + read + " of " + topic + " after the READ grant");
      return "after the READ grant: " + topic + " read group-less and in group acl-ok-java";
    }
    List<String> seen = new ArrayList<>();
    // READ on the topic is missing: Fetch (and ListOffsets) answer TOPIC_AUTHORIZATION_FAILED.
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(alice)) {
      List<String> read = readValues(consumer, topic, 1);
      throw new AssertionError("group-less read of " + topic + " without READ returned " + read);
    } catch (TopicAuthorizationException e) {
      Client.check(e.unauthorizedTopics().contains(topic), "TopicAuthorizationException without " + topic + ": " + e);
      seen.add("fetch: " + e.getClass().getSimpleName());
    }
    // No ACL on group acl-denied-java: GROUP_AUTHORIZATION_FAILED (FindCoordinator or JoinGroup).
    for (String protocol : List.of("classic", "consumer")) {
      try (KafkaConsumer<byte[], byte[]> consumer = consumer(alice, ConsumerConfig.GROUP_ID_CONFIG, "acl-denied-java", ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol)) {
        consumer.subscribe(List.of(topic));
        List<String> read = poll(consumer, 1);
        throw new AssertionError("group acl-denied-java (" + protocol + ") without READ on the group read " + read);
      } catch (GroupAuthorizationException e) {
        Client.check("acl-denied-java".equals(e.groupId()), "GroupAuthorizationException for group " + e.groupId());
        seen.add("group (" + protocol + "): " + e.getClass().getSimpleName());
      }
    }
    // No ACL on any transactional id: InitProducerId answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
    try (KafkaProducer<byte[], byte[]> producer = producer(alice, ProducerConfig.TRANSACTIONAL_ID_CONFIG, "acl-txn-java")) {
      producer.initTransactions();
      throw new AssertionError("initTransactions with transactional id acl-txn-java succeeded without WRITE on it");
    } catch (TransactionalIdAuthorizationException e) {
      seen.add("initTransactions: " + e.getClass().getSimpleName());
    }
    // Metadata shows only the topics alice may describe.
    try (Admin admin = Admin.create(alice)) {
      Set<String> names = admin.listTopics().names().get();
      Client.check(names.contains(topic) && !names.contains("hidden-acl"), "alice's listTopics: " + names + " (expected " + topic + ", not hidden-acl)");
      seen.add("listTopics hides hidden-acl");
    }
    seen.add(denyWithAdminClient(alice, topic));
    return String.join("; ", seen);
  }

  /**
   * With the Java AdminClient as admin: a DENY WRITE for alice on the topic (over her prefixed ALLOW) makes her
   * Produce fail with TOPIC_AUTHORIZATION_FAILED; describeAcls lists it; deleteAcls removes it and she writes again.
   */
  private String denyWithAdminClient(Properties alice, String topic) throws Exception {
    ResourcePattern pattern = new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL);
    AclBinding deny = new AclBinding(pattern, new AccessControlEntry("User:alice", "*", AclOperation.WRITE, AclPermissionType.DENY));
    AclBindingFilter filter = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, topic, PatternType.LITERAL),
        new AccessControlEntryFilter("User:alice", null, AclOperation.ANY, AclPermissionType.ANY));
    try (Admin admin = Admin.create(transport("PLAIN", "admin", false))) {
      admin.createAcls(List.of(deny)).all().get();
      Client.check(admin.describeAcls(filter).values().get().contains(deny), "describeAcls " + filter + " lacks " + deny);
      try (KafkaProducer<byte[], byte[]> producer = producer(alice, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false")) {
        producer.send(new ProducerRecord<>(topic, "denied".getBytes(StandardCharsets.UTF_8))).get();
        throw new AssertionError("alice's Produce to " + topic + " succeeded under a DENY WRITE");
      } catch (ExecutionException e) {
        Client.check(e.getCause() instanceof TopicAuthorizationException, "Produce under a DENY WRITE failed with " + e.getCause());
      }
      var deleted = admin.deleteAcls(List.of(filter)).all().get();
      Client.check(deleted.size() == 1 && deleted.contains(deny), "deleteAcls " + filter + " deleted " + deleted);
      Client.check(admin.describeAcls(filter).values().get().isEmpty(), "describeAcls after deleteAcls: " + admin.describeAcls(filter).values().get());
    }
    try (KafkaProducer<byte[], byte[]> producer = producer(alice, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false")) {
      producer.send(new ProducerRecord<>(topic, "allowed".getBytes(StandardCharsets.UTF_8))).get();
    }
    return "AdminClient createAcls DENY WRITE: Produce TopicAuthorizationException; describeAcls, deleteAcls, Produce ok";
  }

  /**
   * quota-throttle: a producer (client id quota-java, over PLAINTEXT) sends 10 KiB records as fast as it can for
   * 26 s; over the last 20 s (after the first burst the broker lets through and its pay-back) its acknowledged bytes
   * per second must be within 10% of producer_byte_rate, and its throttle-time metrics above 0.
   */
  String quotaThrottle() throws Exception {
    long quota = Long.parseLong(env("FJORD_SEC_QUOTA_BYTE_RATE"));
    String topic = "quota-java";
    client.admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
    byte[] value = new byte[10 * 1024];
    AtomicLong acked = new AtomicLong();
    AtomicReference<Exception> failed = new AtomicReference<>();
    long start = System.nanoTime();
    long measureFrom = 6_000_000_000L;
    long end = 26_000_000_000L;
    long ackedAtMeasureStart = -1;
    long measureStarted = 0;
    Map<MetricName, ? extends Metric> metrics;
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(with(new Properties(),
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, client.bootstrap, ProducerConfig.CLIENT_ID_CONFIG, "quota-java",
        ProducerConfig.LINGER_MS_CONFIG, "5", ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(64 * 1024), ProducerConfig.BUFFER_MEMORY_CONFIG, Integer.toString(1024 * 1024)),
        new ByteArraySerializer(), new ByteArraySerializer())) {
      for (long now = System.nanoTime() - start; now < end && failed.get() == null; now = System.nanoTime() - start) {
        if (ackedAtMeasureStart < 0 && now >= measureFrom) {
          ackedAtMeasureStart = acked.get();
          measureStarted = now;
        }
        producer.send(new ProducerRecord<>(topic, value), (md, e) -> {
          if (e != null) failed.compareAndSet(null, e);
          else acked.addAndGet(value.length);
        });
      }
      double rate = (acked.get() - ackedAtMeasureStart) / ((System.nanoTime() - start - measureStarted) / 1e9);
      metrics = producer.metrics();
      if (failed.get() != null) throw failed.get();
      double avg = metric(metrics, "produce-throttle-time-avg");
      double max = metric(metrics, "produce-throttle-time-max");
      String summary = String.format("%.0f bytes/s acknowledged over the last 20 s under producer_byte_rate=%d (%.1f%%); produce-throttle-time-avg %.1f ms, -max %.1f ms",
          rate, quota, 100.0 * rate / quota, avg, max);
      Client.check(Math.abs(rate - quota) <= 0.1 * quota, "not within 10% of the quota: " + summary);
      Client.check(avg > 0 && max > 0, "no throttle time in the producer's metrics: " + summary);
      return summary;
    }
  }

  static double metric(Map<MetricName, ? extends Metric> metrics, String name) {
    for (var e : metrics.entrySet()) {
      if (e.getKey().name().equals(name) && e.getKey().group().equals("producer-metrics")) return ((Number) e.getValue().metricValue()).doubleValue();
    }
    throw new IllegalStateException("no producer metric " + name);
  }
}
