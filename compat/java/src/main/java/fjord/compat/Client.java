package fjord.compat;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;

/** Fjord compatibility client: the Apache Kafka Java client. Usage: Client BOOTSTRAP SCENARIO (exit 0 = pass). */
public final class Client {
  private final String bootstrap;
  private final Admin admin;

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

  /** Runs f until it succeeds or 10 s pass (metadata propagation). */
  static void retry(Callable<Void> f) throws Exception {
    long deadline = System.currentTimeMillis() + 10_000;
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
        default -> {
          System.err.println("unknown scenario " + args[1]);
          code = 2;
        }
      }
    } catch (Throwable e) {
      Throwable cause = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
      System.err.println("FAIL: " + cause);
      code = 1;
    } finally {
      client.admin.close(java.time.Duration.ofSeconds(2));
    }
    System.exit(code);
  }
}
