// The replica fetchers' connections to leader brokers (replica/replica-fetcher.ts's LeaderConnection)
// over the inter-broker client, as Kafka's ReplicaFetcherThread sends through its BrokerBlockingSender:
// a BrokerClient to the broker's address, the versions it negotiated, its request timeout.
import { UnsupportedVersionError } from '../protocol/primitives';
import type { ConnectToLeader, LeaderApi, LeaderConnection } from '../replica/replica-fetcher';
import { BrokerClient, BrokerConnectionError, type BrokerClientOptions } from './broker-client';

/** Where a broker listens, from the cluster's metadata; undefined for a broker not registered. */
export type BrokerAddressLookup = (brokerId: number) => { host: string; port: number } | undefined;

export type LeaderConnectionOptions = Omit<BrokerClientOptions, 'host' | 'port'>;

/** A ConnectToLeader that opens a BrokerClient to the leader's address. */
export function connectToLeaderOver(lookup: BrokerAddressLookup, opts: LeaderConnectionOptions): ConnectToLeader {
  return async (leaderId) => {
    const address = lookup(leaderId);
    if (!address) throw new BrokerConnectionError(`broker ${leaderId} has no known address`);
    const client = await BrokerClient.connect({ ...opts, ...address });
    return leaderConnectionOf(client);
  };
}

function leaderConnectionOf(client: BrokerClient): LeaderConnection {
  return {
    versionOf(apiKey: LeaderApi) {
      try {
        return client.usableVersion(apiKey);
      } catch (err) {
        if (err instanceof UnsupportedVersionError) return undefined;
        throw err;
      }
    },
    request: (apiKey, body) => client.request(apiKey, body),
    close: () => client.close(),
  };
}
