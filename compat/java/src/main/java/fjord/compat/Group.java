package fjord.compat;

import static fjord.compat.Client.check;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The consumer-group scenarios with the Java KafkaConsumer: the same steps and checks as compat/lib/group.js
 * (group-consume, group-rebalance, group-static; read the description there). Each scenario runs twice at once,
 * in two groups on two topics: with the classic protocol, with the RangeAssignor (eager) and with the
 * CooperativeStickyAssignor (incremental); with the consumer protocol (KIP-848, the -consumer rows), with the
 * broker's range and uniform assignors (group.remote.assignor), the broker's session timeout and heartbeat
 * interval (group.consumer.*: 6 s and 0.5 s on the compat brokers). A member is a KafkaConsumer polling on a
 * thread of its own; "killed" is close(CloseOptions.groupMembershipOperation(REMAIN_IN_GROUP)): no LeaveGroup,
 * heartbeats stop; on the consumer protocol, the victim is a member in a JVM of its own, SIGKILLed. migration()
 * is the group-migration row.
 */
final class Group {
  static final int PARTITIONS = 6;
  static final int HEARTBEAT_MS = 500;
  static final int REBALANCE_SESSION_MS = 6000; // group.min.session.timeout.ms's default: the shortest a broker allows
  static final int SESSION_MS = 10000;
  static final int REBALANCE_TIMEOUT_MS = 20000; // max.poll.interval.ms: bounds a join phase
  static final int COMMIT_INTERVAL_MS = 500;
  static final Pattern KEY = Pattern.compile("key-(\\d+)");

  private final Client client;
  private final String protocol; // group.protocol: "classic" or "consumer"
  private final String assignor; // classic: "range" or "cooperative-sticky"; consumer: the broker's "range" or "uniform"

  private Group(Client client, String protocol, String assignor) {
    this.client = client;
    this.protocol = protocol;
    this.assignor = assignor;
  }

  record Rec(int p, long o, int i, String member) {}

  /**
   * One KafkaConsumer in the group, polling on its own thread; the state is read by the scenario's thread. A member
   * may run in a JVM of its own instead (the four-argument constructor: this program in group-member mode, which
   * prints the member's events as lines, `echo` below), so that it can be SIGKILLed: the consumer protocol's Java
   * consumer leaves the group on close() even with REMAIN_IN_GROUP.
   */
  final class Member implements Runnable {
    final String name;
    final Set<Integer> assignment = new TreeSet<>();
    final List<String> events = new ArrayList<>();
    final List<Long> eventTimes = new ArrayList<>();
    final List<Rec> records = new ArrayList<>();
    final List<String> errors = new ArrayList<>();
    int generation = -1;
    long lastEvent = System.currentTimeMillis();
    private final KafkaConsumer<byte[], byte[]> consumer; // null in the member's own JVM
    private final Process process; // the member's own JVM, or null
    private final PrintStream echo; // group-member mode: where the events go as lines, or null
    private final String topic;
    private final Thread thread;
    private volatile CloseOptions.GroupMembershipOperation closing; // set: close this way
    private volatile boolean commitOnClose;

    Member(String name, String topic, String group, int sessionMs, String instanceId) {
      this(name, topic, group, sessionMs, instanceId, null);
    }

    Member(String name, String topic, String group, int sessionMs, String instanceId, PrintStream echo) {
      this.name = name;
      this.topic = topic;
      this.echo = echo;
      this.process = null;
      Properties props = new Properties();
      props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, client.bootstrap);
      props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
      props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
      props.put(ConsumerConfig.CLIENT_ID_CONFIG, "fjord-compat-java-" + protocol + "-" + assignor + "-" + name);
      if (protocol.equals("consumer")) {
        props.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, assignor); // the consumer refuses session/heartbeat settings
      } else {
        props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
            (assignor.equals("range") ? RangeAssignor.class : CooperativeStickyAssignor.class).getName());
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, String.valueOf(sessionMs));
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, String.valueOf(HEARTBEAT_MS));
      }
      props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      props.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, String.valueOf(REBALANCE_TIMEOUT_MS));
      props.put(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, String.valueOf(COMMIT_INTERVAL_MS));
      props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "250");
      props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
      props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
      if (instanceId != null) props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
      consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
      thread = new Thread(this, "member-" + protocol + "-" + assignor + "-" + name);
      thread.setDaemon(true);
      thread.start();
    }

    /** The member in a JVM of its own (group-member mode); a thread reads the events it prints. */
    Member(String name, String topic, String group, int sessionMs) throws java.io.IOException {
      this.name = name;
      this.topic = topic;
      this.echo = null;
      this.consumer = null;
      this.process = new ProcessBuilder("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
          Client.class.getName(), client.bootstrap, "group-member", protocol, assignor, name, topic, group, String.valueOf(sessionMs))
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
      thread = new Thread(this::readEvents, "member-reader-" + protocol + "-" + assignor + "-" + name);
      thread.setDaemon(true);
      thread.start();
    }

    /** The lines a member in its own JVM prints (say()): "assigned|revoked|lost P...", "rec P O I", "gen G", "error TEXT". */
    private void readEvents() {
      try (java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream()))) {
        for (String line; (line = in.readLine()) != null; ) {
          String[] w = line.split(" ");
          switch (w[0]) {
            case "assigned", "revoked", "lost" -> event(w[0], Arrays.stream(w).skip(1).map(p -> new TopicPartition(topic, Integer.parseInt(p))).toList());
            case "rec" -> addRecord(new Rec(Integer.parseInt(w[1]), Long.parseLong(w[2]), Integer.parseInt(w[3]), name));
            case "gen" -> setGeneration(Integer.parseInt(w[1]));
            default -> addError(line);
          }
        }
      } catch (Throwable e) {
        addError("reading the member's events: " + e);
      }
    }

    private void say(String line) {
      if (echo == null) return;
      synchronized (echo) {
        echo.println(line);
        echo.flush();
      }
    }

    private synchronized void addRecord(Rec r) {
      records.add(r);
      say("rec " + r.p() + " " + r.o() + " " + r.i());
    }

    private synchronized void addError(String e) {
      errors.add(e);
      say("error " + e.replace('\n', ' '));
    }

    private synchronized void setGeneration(int g) {
      if (g != generation) say("gen " + g);
      generation = g;
    }

    private synchronized void event(String ev, Collection<TopicPartition> partitions) {
      List<Integer> ps = partitions.stream().map(TopicPartition::partition).sorted().toList();
      if (ev.equals("assigned")) assignment.addAll(ps);
      else assignment.removeAll(ps);
      say(ev + ps.stream().map(p -> " " + p).collect(Collectors.joining()));
      events.add(ev + " " + ps);
      eventTimes.add(System.currentTimeMillis());
      lastEvent = System.currentTimeMillis();
    }

    @Override
    public void run() {
      try {
        consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
          @Override
          public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            event("revoked", partitions); // auto-commit has committed what poll() returned
          }

          @Override
          public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            event("assigned", partitions);
          }

          @Override
          public void onPartitionsLost(Collection<TopicPartition> partitions) {
            event("lost", partitions);
          }
        });
        while (closing == null) {
          for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
            String key = r.key() == null ? "null" : new String(r.key());
            Matcher m = KEY.matcher(key);
            if (m.matches()) addRecord(new Rec(r.partition(), r.offset(), Integer.parseInt(m.group(1)), name));
            else addError("unexpected key " + key + " at " + r.partition() + "/" + r.offset());
          }
          setGeneration(consumer.groupMetadata().generationId());
        }
        if (commitOnClose && !consumer.assignment().isEmpty()) consumer.commitSync();
        consumer.close(CloseOptions.groupMembershipOperation(closing).withTimeout(Duration.ofSeconds(10)));
      } catch (Throwable e) {
        addError(e.toString());
        try {
          consumer.close(CloseOptions.timeout(Duration.ZERO));
        } catch (Throwable ignored) {
          // already failed
        }
      }
    }

    /** Commits and closes: LeaveGroup for a dynamic member, none for a static one (DEFAULT). */
    void close() throws Exception {
      if (process != null) {
        if (closing == null && process.isAlive()) {
          closing = CloseOptions.GroupMembershipOperation.DEFAULT;
          process.getOutputStream().write("close\n".getBytes());
          process.getOutputStream().flush();
        }
        check(process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS), name + " did not close within 20 s");
        thread.join(5_000);
        return;
      }
      commitOnClose = true;
      stop(CloseOptions.GroupMembershipOperation.DEFAULT);
    }

    /**
     * Stops the member without leaving the group: SIGKILL of its own JVM, or a close with REMAIN_IN_GROUP (the
     * classic protocol's consumer then sends no LeaveGroup and stops heartbeating, as a killed process would).
     */
    void kill() throws InterruptedException {
      if (process != null) {
        closing = CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP;
        process.destroyForcibly().waitFor();
        thread.join(5_000);
        return;
      }
      stop(CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP);
    }

    private void stop(CloseOptions.GroupMembershipOperation how) throws InterruptedException {
      if (closing == null) closing = how;
      thread.join(20_000);
      check(!thread.isAlive(), name + " did not close within 20 s");
    }

    boolean alive() {
      return closing == null && (process != null ? process.isAlive() : thread.isAlive());
    }

    synchronized Set<Integer> owned() {
      return new TreeSet<>(assignment);
    }

    synchronized String show() {
      return name + ": " + assignment + " " + records.size() + " records gen " + generation + (alive() ? "" : " closed")
          + (errors.isEmpty() ? "" : " errors: " + String.join(" | ", errors.subList(Math.max(0, errors.size() - 3), errors.size())));
    }
  }

  static String showAll(List<Member> ms) {
    return ms.stream().map(Member::show).collect(Collectors.joining("; "));
  }

  static String owned(List<Member> ms) {
    return ms.stream().map(m -> m.name + " " + m.owned()).collect(Collectors.joining(", "));
  }

  static long waitFor(BooleanSupplier cond, long ms, String what, List<Member> ms2) throws InterruptedException {
    long start = System.currentTimeMillis();
    while (!cond.getAsBoolean()) {
      if (System.currentTimeMillis() - start > ms) throw new AssertionError(what + " (after " + ms + " ms): " + showAll(ms2));
      Thread.sleep(25);
    }
    return System.currentTimeMillis() - start;
  }

  static boolean settled(List<Member> ms) {
    Set<Integer> all = new TreeSet<>();
    for (Member m : ms) {
      Set<Integer> o = m.owned();
      if (!m.alive() || o.isEmpty()) return false;
      for (int p : o) if (!all.add(p)) return false;
    }
    return all.size() == PARTITIONS;
  }

  static void waitSettled(List<Member> ms, long timeoutMs, String what) throws InterruptedException {
    waitFor(() -> settled(ms) && ms.stream().allMatch(m -> {
      synchronized (m) {
        return System.currentTimeMillis() - m.lastEvent >= 1000;
      }
    }), timeoutMs, what, ms);
  }

  static Set<Integer> read(List<Member> ms, int lo, int hi) {
    Set<Integer> seen = new TreeSet<>();
    for (Member m : ms) {
      synchronized (m) {
        for (Rec r : m.records) if (r.i() >= lo && r.i() < hi) seen.add(r.i());
      }
    }
    return seen;
  }

  static void checkNoDuplicates(List<Member> ms, int lo, int hi) {
    Map<Integer, Rec> where = new HashMap<>();
    for (Member m : ms) {
      List<Rec> records;
      synchronized (m) {
        records = new ArrayList<>(m.records);
      }
      for (Rec r : records) {
        if (r.i() < lo || r.i() >= hi) continue;
        Rec prev = where.put(r.i(), r);
        check(prev == null, "record key-" + r.i() + " read twice: by " + (prev == null ? "" : prev.member() + " at " + prev.p() + "/" + prev.o())
            + " and by " + r.member() + " at " + r.p() + "/" + r.o());
      }
    }
  }

  static void checkNoErrors(List<Member> ms) {
    for (Member m : ms) {
      synchronized (m) {
        check(m.errors.isEmpty(), m.name + " reported errors: " + String.join(" | ", m.errors.subList(0, Math.min(5, m.errors.size()))));
      }
    }
  }

  void produce(String topic, int lo, int hi) throws Exception {
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    for (int i = lo; i < hi; i++) records.add(Client.rec(topic, null, Data.key(i), Data.value(i), Data.headers(i)));
    client.produce(records);
  }

  String topic(String prefix) throws Exception {
    return client.createTopic(prefix + "-" + protocol + "-" + assignor, PARTITIONS, Map.of());
  }

  /**
   * With group.protocol=consumer, the group is a consumer group: the Java consumer fails where the broker lacks
   * ConsumerGroupHeartbeat, other clients fall back to the classic protocol, and this check keeps the rows alike.
   */
  void checkGroupType(String group) throws Exception {
    if (!protocol.equals("consumer")) return;
    GroupType type = client.admin.describeConsumerGroups(List.of(group)).all().get().get(group).type();
    check(type == GroupType.CONSUMER, "group " + group + " is of type " + type + ", expected CONSUMER (group.protocol=consumer)");
  }

  static void closeAll(List<Member> ms) {
    for (Member m : ms) {
      try {
        m.kill();
      } catch (Throwable ignored) {
        // cleaning up
      }
    }
  }

  String consume() throws Exception {
    String topic = topic("gc");
    produce(topic, 0, 600);
    String group = topic + "-group";
    List<Member> ms = new ArrayList<>();
    try {
      for (String n : List.of("m0", "m1", "m2")) ms.add(new Member(n, topic, group, SESSION_MS, null));
      waitFor(() -> read(ms, 0, 600).size() == 600, 30_000, "the three members did not read all 600 records", ms);
      waitSettled(ms, 20_000, "the group did not settle with three members owning all 6 partitions");
      checkGroupType(group);
      checkNoErrors(ms);
      checkNoDuplicates(ms, 0, 600);
      String assignments = owned(ms);
      for (Member m : ms) m.close();
      checkNoErrors(ms);
      checkCommittedAtEnd(client, group, topic);
      return "600 records read once each; assignments " + assignments + "; committed offsets = end offsets";
    } finally {
      closeAll(ms);
    }
  }

  String rebalance() throws Exception {
    String topic = topic("gr");
    String group = topic + "-group";
    List<Member> ms = new ArrayList<>();
    try {
      // The consumer protocol's Java consumer leaves the group on close() even with REMAIN_IN_GROUP: there the victim
      // runs in a JVM of its own, which gets SIGKILL.
      boolean ownJvm = protocol.equals("consumer");
      String how = ownJvm ? "its JVM got SIGKILL" : "closed with REMAIN_IN_GROUP";
      for (String n : List.of("m0", "m1")) ms.add(new Member(n, topic, group, REBALANCE_SESSION_MS, null));
      ms.add(ownJvm ? new Member("m2", topic, group, REBALANCE_SESSION_MS) : new Member("m2", topic, group, REBALANCE_SESSION_MS, null));
      waitSettled(ms, 30_000, "the group did not settle with three members owning all 6 partitions");
      checkGroupType(group);
      produce(topic, 0, 300);
      waitFor(() -> read(ms, 0, 300).size() == 300, 20_000, "records 0..299 not all read before the kill", ms);
      Member victim = ms.get(2);
      List<Member> survivors = ms.subList(0, 2);
      Set<Integer> victimHad = victim.owned();
      long t0 = System.currentTimeMillis();
      victim.kill();
      produce(topic, 300, 600);
      waitFor(() -> settled(survivors), REBALANCE_SESSION_MS + 20_000, victim.name + "'s partitions " + victimHad + " did not move to the survivors", survivors);
      long moved = System.currentTimeMillis() - t0;
      long low = REBALANCE_SESSION_MS - HEARTBEAT_MS - 1000;
      long high = REBALANCE_SESSION_MS + 2 * HEARTBEAT_MS + 2500;
      check(moved >= low, "the partitions moved " + moved + " ms after the kill, before the " + REBALANCE_SESSION_MS + " ms session could expire (" + how + ")");
      check(moved <= high, "the partitions moved " + moved + " ms after the kill, later than session timeout " + REBALANCE_SESSION_MS + " ms + rejoin (" + high + " ms)");
      waitFor(() -> read(survivors, 300, 600).size() == 300, 20_000, "records 300..599 (produced after the kill) not all read by the survivors", survivors);
      checkNoErrors(survivors);
      checkNoDuplicates(survivors, 300, 600);
      String after = owned(survivors);
      for (Member m : survivors) m.close();
      return victim.name + " " + victimHad + " killed (" + how + "); " + after + " " + moved + " ms later; records 300..599 all read";
    } finally {
      closeAll(ms);
    }
  }

  String staticMembership() throws Exception {
    String topic = topic("gs");
    String group = topic + "-group";
    List<Member> ms = new ArrayList<>();
    try {
      Member first = new Member("a", topic, group, SESSION_MS, group + "-a");
      ms.add(first);
      waitFor(() -> first.owned().size() == PARTITIONS, 30_000, "the first static member did not get all 6 partitions", ms);
      Member second = new Member("b", topic, group, SESSION_MS, group + "-b");
      ms.add(second);
      waitSettled(List.of(first, second), 30_000, "the group did not settle with two static members");
      checkGroupType(group);
      produce(topic, 0, 200);
      waitFor(() -> read(ms, 0, 200).size() == 200, 20_000, "records 0..199 not all read", ms);
      int eventsBefore;
      int genBefore;
      synchronized (first) {
        eventsBefore = first.events.size();
        genBefore = first.generation;
      }
      Set<Integer> assignmentBefore = first.owned();
      Set<Integer> secondHad = second.owned();
      second.close(); // a static member: close() sends no LeaveGroup
      long t0 = System.currentTimeMillis();
      Member again = new Member("b2", topic, group, SESSION_MS, group + "-b");
      ms.add(again);
      waitFor(() -> !again.owned().isEmpty(), SESSION_MS, "the restarted static member got no partitions within the " + SESSION_MS + " ms session timeout", ms);
      long rejoin = System.currentTimeMillis() - t0;
      produce(topic, 200, 400);
      waitFor(() -> read(List.of(first, again), 200, 400).size() == 200, 20_000, "records 200..399 not all read after the restart", ms);
      Thread.sleep(Math.max(0, 2000 - (System.currentTimeMillis() - t0 - rejoin)));
      List<String> extra = new ArrayList<>();
      int genAfter;
      synchronized (first) {
        for (int j = eventsBefore; j < first.events.size(); j++) extra.add(first.events.get(j) + " at +" + (first.eventTimes.get(j) - t0) + " ms");
        genAfter = first.generation;
      }
      check(extra.isEmpty(), "the restart of static member b rebalanced the group: member a saw " + String.join(", ", extra));
      check(first.owned().equals(assignmentBefore), "member a's assignment changed: " + assignmentBefore + " -> " + first.owned());
      check(genAfter == genBefore, "member a's generation changed: " + genBefore + " -> " + genAfter);
      check(again.owned().equals(secondHad), "the restarted member got " + again.owned() + ", it had " + secondHad);
      checkNoErrors(List.of(first, again));
      checkNoDuplicates(ms, 0, 400);
      first.close();
      again.close();
      return "static member b " + secondHad + " restarted and rejoined in " + rejoin + " ms; member a " + assignmentBefore + " generation " + genBefore + " saw no rebalance";
    } finally {
      closeAll(ms);
    }
  }

  /** The group's committed offsets on the topic's PARTITIONS partitions are their end offsets. */
  static void checkCommittedAtEnd(Client client, String group, String topic) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> committed = client.admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (int p = 0; p < PARTITIONS; p++) latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
    Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = client.admin.listOffsets(latest).all().get();
    for (TopicPartition tp : latest.keySet()) {
      OffsetAndMetadata c = committed.get(tp);
      check(c != null && c.offset() == ends.get(tp).offset(), tp + ": committed " + c + ", expected the end offset " + ends.get(tp).offset());
    }
  }

  /**
   * group-migration (run once): a group migrates online from the classic protocol to the consumer protocol while it
   * consumes, as KIP-848 upgrades a group (group.consumer.migration.policy, Kafka's default "bidirectional"). Three
   * classic members (the ConsumerPartitionAssignor protocol "consumer", cooperative-sticky) read records 0..299; then,
   * one at a time, a member closes (commit, LeaveGroup) and a consumer-protocol member (the broker's uniform assignor)
   * takes its place, and 100 more records are produced and read. Pass: every record read; the 100 produced after the
   * last switch read once each (earlier ones may be read again around a switch: from the last commit); from the first
   * switch on, the group is a consumer group (Admin describeConsumerGroups: type CONSUMER; Kafka converts the group
   * when the first consumer-protocol member joins), and it ends with three members on the consumer protocol.
   */
  static String migration(Client client) throws Exception {
    Group classic = new Group(client, "classic", "cooperative-sticky");
    Group consumer = new Group(client, "consumer", "uniform");
    String topic = classic.topic("gm");
    String group = topic + "-group";
    List<Member> members = new ArrayList<>(); // the current ones
    List<Member> all = new ArrayList<>();
    try {
      for (String n : List.of("c0", "c1", "c2")) members.add(classic.new Member(n, topic, group, SESSION_MS, null));
      all.addAll(members);
      classic.produce(topic, 0, 300);
      waitFor(() -> read(all, 0, 300).size() == 300, 30_000, "the three classic members did not read records 0..299", all);
      waitSettled(members, 30_000, "the classic group did not settle with three members owning all 6 partitions");
      checkNoDuplicates(all, 0, 300);
      int next = 300;
      for (int i = 0; i < members.size(); i++) {
        members.get(i).close();
        Member m = consumer.new Member("k" + i, topic, group, SESSION_MS, null);
        members.set(i, m);
        all.add(m);
        int lo = next;
        next += 100;
        classic.produce(topic, lo, next);
        waitFor(() -> read(all, lo, lo + 100).size() == 100, 30_000, "records " + lo + ".." + (lo + 99) + " not all read after member c" + i + " switched to the consumer protocol", all);
        waitSettled(members, 30_000, "the group did not settle after member c" + i + " switched to the consumer protocol");
        GroupType type = client.admin.describeConsumerGroups(List.of(group)).all().get().get(group).type();
        check(type == GroupType.CONSUMER, "after member c" + i + " switched to the consumer protocol the group is of type " + type + ", expected CONSUMER");
      }
      int lo = next;
      classic.produce(topic, lo, lo + 100);
      waitFor(() -> read(all, lo, lo + 100).size() == 100, 30_000, "records " + lo + ".." + (lo + 99) + " (after the last switch) not all read", all);
      checkNoDuplicates(all, lo, lo + 100);
      check(read(all, 0, lo + 100).size() == lo + 100, "not every record read: " + read(all, 0, lo + 100).size() + " of " + (lo + 100));
      checkNoErrors(all);
      var description = client.admin.describeConsumerGroups(List.of(group)).all().get().get(group);
      check(description.type() == GroupType.CONSUMER && description.members().size() == 3
          && description.members().stream().allMatch(m -> m.upgraded().orElse(false)),
          "the group did not end as a consumer group of three consumer-protocol members: " + description);
      int reads = all.stream().mapToInt(m -> {
        synchronized (m) {
          return m.records.size();
        }
      }).sum();
      String owners = owned(members);
      for (Member m : members) m.close();
      return (lo + 100) + " records read (" + (reads - lo - 100) + " read again around the switches); three members switched to the consumer protocol one at a time; the group is a consumer group: " + owners;
    } finally {
      closeAll(all);
    }
  }

  /**
   * Group-member mode (`Client BOOTSTRAP group-member PROTOCOL ASSIGNOR NAME TOPIC GROUP SESSION_MS`): one member,
   * its events printed as lines (Member.readEvents), until "close" on stdin; then it commits and closes.
   */
  static void memberProcess(Client client, String[] args) throws Exception {
    Group g = new Group(client, args[2], args[3]);
    Member m = g.new Member(args[4], args[5], args[6], Integer.parseInt(args[7]), null, System.out);
    java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null && !line.contains("close"); ) {
      // waiting for "close", or for the orchestrator to go away
    }
    m.close();
  }

  interface Scenario {
    String run(Group g) throws Exception;
  }

  /**
   * Runs the scenario with both assignors of the protocol at once (classic: range and cooperative-sticky; consumer:
   * the broker's range and uniform); prints both summaries.
   */
  static void both(Client client, String protocol, Scenario scenario) throws Exception {
    Map<String, CompletableFuture<String>> runs = new java.util.LinkedHashMap<>();
    for (String assignor : protocol.equals("consumer") ? List.of("range", "uniform") : List.of("range", "cooperative-sticky")) {
      CompletableFuture<String> f = new CompletableFuture<>();
      Thread t = new Thread(() -> {
        try {
          f.complete(scenario.run(new Group(client, protocol, assignor)));
        } catch (Throwable e) {
          f.completeExceptionally(e);
        }
      }, "scenario-" + assignor);
      t.setDaemon(true);
      t.start();
      runs.put(assignor, f);
    }
    List<String> failures = new ArrayList<>();
    for (Map.Entry<String, CompletableFuture<String>> run : runs.entrySet()) {
      try {
        System.out.println(run.getKey() + ": " + run.getValue().join());
      } catch (java.util.concurrent.CompletionException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        failures.add(run.getKey() + ": " + cause);
      }
    }
    check(failures.isEmpty(), String.join("\n", failures));
  }
}
