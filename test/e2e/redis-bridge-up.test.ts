import { createClient } from 'redis';
import { redisLiveBridge } from '../../src/storage/redis-live-bridge';
import { eventually } from '../helpers/processes';
import { redisProblem, startRedis } from '../helpers/redis-server';

// Whether the live channel is up decides how often a model call sends its text batches (see
// `liveText.reachesReaders`): 100 ms while Redis carries the text to readers, 50 ms while it cannot.
const skip = redisProblem();
if (skip) process.stderr.write(`\nredis-bridge-up.test: skipped: ${skip}\n`);

(skip ? it.skip : it)(
  'the Redis channel says it is up while Redis is, down once it is gone, and up when it is back, with the channels read then',
  async () => {
    const redis = await startRedis();
    const bridge = redisLiveBridge({ url: redis.url, namespace: 'bridge-up', warn: () => undefined });
    try {
      expect(await eventually(() => bridge.up === true, 10_000)).toBe(true);
      bridge.watch('kept');
      bridge.watch('left');
      const subscribed = async (expected: string[]) => {
        const probe = createClient({ url: redis.url });
        await probe.connect();
        try {
          const channels = async () => (await probe.pubSubChannels('durable-agents:live:bridge-up:*')).sort();
          const wanted = JSON.stringify(expected.map((w) => `durable-agents:live:bridge-up:${w}`));
          return await eventually(async () => JSON.stringify(await channels()) === wanted, 10_000);
        } finally {
          probe.destroy();
        }
      };
      expect(await subscribed(['kept', 'left'])).toBe(true);
      await redis.kill();
      expect(await eventually(() => bridge.up === false, 10_000)).toBe(true);
      // A reader that goes while Redis is away: its channel is not taken up again when Redis is back.
      bridge.unwatch('left');
      await redis.restart();
      expect(await eventually(() => bridge.up === true, 10_000)).toBe(true);
      expect(await subscribed(['kept'])).toBe(true);
    } finally {
      await bridge.close();
      await redis.stop();
    }
  },
);
