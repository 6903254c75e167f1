'use strict';
// The clusters the cluster rows drive (cluster-test.js), behind one small interface so that another
// implementation (Apache Kafka's 3-node KRaft cluster, for the oracle run) can be plugged in:
//
//   const cluster = new FjordCluster({ log, size: 4, config: { 'leader.imbalance.check.interval.seconds': '5' } });
//   await cluster.start();          // every node up and registered (size: 3 by default; config: more broker settings)
//   cluster.bootstrap               // "127.0.0.1:P0,127.0.0.1:P1,127.0.0.1:P2"
//   cluster.ids                     // [0, 1, 2]: the node ids
//   await cluster.kill(id);         // SIGKILL node id's process
//   await cluster.restart(id);      // start it again on its port and data dir
//   await cluster.stop();           // everything down, the work dir removed (kept with FJORD_CLUSTER_KEEP=1)
//   cluster.tail(id)                // the last lines of a node's log, for failure messages
//
// FjordCluster: one etcd (dist/src/local-etcd.js) and three `bin/fjord start` processes (lib/broker-process.js),
// with fast-failover settings: the broker's etcd lease 2 s, a follower out of the ISR after 3 s behind.
// KafkaCluster: Apache Kafka's KRaft cluster of three combined nodes through lib/apache-kafka.sh's cluster-start /
// cluster-kill / cluster-restart / cluster-stop (FJORD_KAFKA_SCRIPT names another copy of the script).
// clusterFromEnv(): FJORD_CLUSTER=kafka picks KafkaCluster, else FjordCluster.
const { execFile } = require('child_process');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const { Broker, freePort, ROOT } = require('../lib/broker-process');

// Every broker of the cluster: fast failover (broker.session.timeout.ms is the etcd lease TTL), and
// min.insync.replicas=2 for every topic (the client programs create their topics without topic configs).
// 6 partitions for each internal topic instead of 50: two cores load them at every leadership change.
const BROKER_CONFIG = {
  'broker.session.timeout.ms': '2000',
  'replica.lag.time.max.ms': '3000',
  'replica.fetch.wait.max.ms': '100',
  'min.insync.replicas': '2',
  'offsets.topic.num.partitions': '6',
  'transaction.state.log.num.partitions': '6',
  'group.initial.rebalance.delay.ms': '0',
};

class FjordCluster {
  constructor({ size = 3, config = {}, log = () => {} } = {}) {
    this.ids = Array.from({ length: size }, (_, i) => i);
    this.config = config;
    this.log = log;
  }

  async start() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fjord-cluster-'));
    const { startEtcd } = require(path.join(ROOT, 'dist/src/local-etcd.js'));
    this.etcd = await startEtcd({ dir: path.join(this.dir, 'etcd') });
    const ports = [];
    for (const _ of this.ids) ports.push(await freePort());
    const sets = Object.entries({ ...BROKER_CONFIG, ...this.config, 'etcd.connect': this.etcd.connect }).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
    this.brokers = this.ids.map((id) => new Broker(ports[id], ports[id], path.join(this.dir, `broker${id}`), {
      extraArgs: ['--node-id', String(id), ...sets], log: this.log,
    }));
    this.bootstrap = ports.map((p) => `127.0.0.1:${p}`).join(',');
    await Promise.all(this.brokers.map((b) => b.start()));
    this.log(`etcd ${this.etcd.connect}, brokers ${this.bootstrap}`);
  }

  kill(id) {
    return this.brokers[id].kill();
  }

  restart(id) {
    return this.brokers[id].start();
  }

  tail(id) {
    return this.brokers ? this.brokers[id].tail() : '';
  }

  async stop() {
    await Promise.all((this.brokers || []).map((b) => b.stop()));
    if (this.etcd) await this.etcd.stop();
    if (this.dir && !process.env.FJORD_CLUSTER_KEEP) fs.rmSync(this.dir, { recursive: true, force: true });
    else if (this.dir) this.log(`work dir kept: ${this.dir}`);
  }
}

/** Is a loopback port free to listen on? */
function portFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

class KafkaCluster {
  constructor({ size = 3, config = {}, log = () => {} } = {}) {
    this.ids = Array.from({ length: size }, (_, i) => i);
    this.config = config;
    this.log = log;
    this.script = process.env.FJORD_KAFKA_SCRIPT || path.join(ROOT, 'compat/lib/apache-kafka.sh');
  }

  /** Runs the script (the row's broker settings in FJORD_KAFKA_PROPS); resolves its stdout, rejects with its stderr's tail. */
  sh(...args) {
    const env = { ...process.env, FJORD_KAFKA_PROPS: Object.entries(this.config).map(([k, v]) => `${k}=${v}`).join('\n') };
    return new Promise((resolve, reject) => execFile(this.script, args, { cwd: ROOT, env, timeout: 300000 }, (e, stdout, stderr) =>
      (e ? reject(new Error(`apache-kafka.sh ${args.join(' ')}: ${e.message}\n${stderr.split('\n').slice(-10).join('\n')}`)) : resolve(stdout.trim()))));
  }

  async start() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kafka-cluster-'));
    // Node i: clients on BASE+i, its controller on BASE+size+i: 2 * size free ports in a row.
    let base;
    do base = 20000 + Math.floor(Math.random() * 30000);
    while (!(await Promise.all(Array.from({ length: 2 * this.ids.length }, (_, i) => portFree(base + i)))).every(Boolean));
    this.bootstrap = (await this.sh('cluster-start', this.dir, String(this.ids.length), String(base))).split('\n').pop();
    this.log(`kafka cluster ${this.bootstrap} on ${this.dir}`);
  }

  async kill(id) {
    await this.sh('cluster-kill', this.dir, String(id));
    this.log(`kafka node ${id} killed with SIGKILL`);
  }

  async restart(id) {
    await this.sh('cluster-restart', this.dir, String(id));
    this.log(`kafka node ${id} restarted`);
  }

  tail(id) {
    try {
      return fs.readFileSync(path.join(this.dir, `node${id}`, 'kafka.log'), 'utf8').trim().split('\n').slice(-15).map((l) => `    kafka: ${l.slice(0, 400)}`).join('\n');
    } catch {
      return '';
    }
  }

  async stop() {
    if (!this.dir) return;
    await this.sh('cluster-stop', this.dir).catch((e) => this.log(e.message));
    if (!process.env.FJORD_CLUSTER_KEEP) fs.rmSync(this.dir, { recursive: true, force: true });
    else this.log(`work dir kept: ${this.dir}`);
  }
}

/** The cluster the rows drive: FJORD_CLUSTER=kafka for Apache Kafka (the oracle), else Fjord. */
function clusterFromEnv(opts) {
  return process.env.FJORD_CLUSTER === 'kafka' ? new KafkaCluster(opts) : new FjordCluster(opts);
}

module.exports = { FjordCluster, KafkaCluster, clusterFromEnv };
