// Fjord as a library: start a Kafka-compatible broker in-process.
export { startBroker, Broker } from './broker';
export type { StartBrokerOptions, RunningBroker } from './broker';
export { BrokerConfig } from './config/broker-config';
export { startCluster } from './local-cluster';
export type { StartClusterOptions, RunningCluster } from './local-cluster';
